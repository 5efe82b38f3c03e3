//! The loss table and the torque loss of the lossy gear, as pure functions.
//!
//! Notation (all torques referred to flange a, Modelica sign convention):
//! - `t`: the cut torque at flange a (`flange_a.tau`), positive into the gear;
//! - `loss`: `tauLoss`, so that `flange_b.tau = -ratio (t - loss)`;
//! - `dir`: the direction of rotation of flange a, +1 forward (w_a > 0), -1 backward.
//!
//! The functions are written over [`Scalar`]: `f64` for the simulation, jets for its exact
//! derivatives. The quadrant, the segment and the clamps are chosen by value, so their
//! derivatives are those of the branch the value takes.

use fmu_runtime::{Param, Scalar};

/// Row layout of the loss table: `|w_a|`, `eta_mf1`, `eta_mf2`, `|tau_bf1|`, `|tau_bf2|`.
pub const COLUMNS: usize = 5;
/// Rows the FMU can hold.
pub const MAX_ROWS: usize = 10;
/// Extrapolated efficiencies are kept in [ETA_MIN, 1].
pub const ETA_MIN: f64 = 1e-3;

/// Loss values at one speed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Losses<S = f64> {
    /// Mesh efficiency when flange a drives.
    pub eta1: S,
    /// Mesh efficiency when flange b drives.
    pub eta2: S,
    /// Bearing friction (referred to flange a) when flange a drives.
    pub bf1: S,
    /// Bearing friction (referred to flange a) when flange b drives.
    pub bf2: S,
}

/// `g(t) = t - loss(t) = c t + d` on one quadrant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line<S = f64> {
    pub c: S,
    pub d: S,
}

impl<S: Scalar> Losses<S> {
    /// The losses of a table row (interpolated or not): the efficiencies held in
    /// [ETA_MIN, 1], the frictions' magnitudes.
    fn of(row: [S; COLUMNS]) -> Self {
        Losses {
            eta1: row[1].clamp(ETA_MIN, 1.0),
            eta2: row[2].clamp(ETA_MIN, 1.0),
            bf1: row[3].abs(),
            bf2: row[4].abs(),
        }
    }

    /// No mesh loss, no bearing friction.
    pub fn ideal() -> Self {
        let (one, zero) = (S::constant(1.0), S::constant(0.0));
        Losses {
            eta1: one,
            eta2: one,
            bf1: zero,
            bf2: zero,
        }
    }

    /// The part of the bearing friction that acts on flange a:
    /// `bf1 = eta1 bf_a + bf_b/ratio`, `bf2 = bf_a/eta2 + bf_b/ratio` solved for `bf_a`.
    /// It is where the two quadrant lines of one direction meet, so switching the driving side
    /// at `tau_eta = t -+ bf_a = 0` keeps the loss continuous.
    pub fn bf_a(&self) -> S {
        let den = self.eta1 - S::constant(1.0) / self.eta2;
        if den.value().abs() < 1e-12 {
            // No mesh loss: both lines have slope 1 and (for a valid table) coincide.
            S::constant(0.0)
        } else {
            (self.bf1 - self.bf2) / den
        }
    }

    /// `tau_eta`, the torque whose sign tells the driving side (the seed's correction).
    pub fn tau_eta(&self, t: S, dir: f64) -> S {
        t - self.bf_a() * dir
    }

    /// The quadrant line for direction `dir` and driving side `a_drives`.
    pub fn line(&self, dir: f64, a_drives: bool) -> Line<S> {
        match (dir > 0.0, a_drives) {
            // Forward, a drives (quadrant 1): loss = (1 - eta1) t + bf1.
            (true, true) => Line {
                c: self.eta1,
                d: -self.bf1,
            },
            // Forward, b drives (quadrant 2): loss = (1 - 1/eta2) t + bf2.
            (true, false) => Line {
                c: S::constant(1.0) / self.eta2,
                d: -self.bf2,
            },
            // Backward, b drives (quadrant 4): loss = (1 - 1/eta2) t - bf2.
            (false, false) => Line {
                c: S::constant(1.0) / self.eta2,
                d: self.bf2,
            },
            // Backward, a drives (quadrant 3): loss = (1 - eta1) t - bf1.
            (false, true) => Line {
                c: self.eta1,
                d: self.bf1,
            },
        }
    }

    /// `tauLoss` at flange torque `t` while turning in direction `dir`.
    pub fn loss(&self, t: S, dir: f64) -> S {
        let a_drives = if dir > 0.0 {
            self.tau_eta(t, dir).value() >= 0.0
        } else {
            self.tau_eta(t, dir).value() < 0.0
        };
        self.line(dir, a_drives).loss(t)
    }
}

impl<S: Scalar> Line<S> {
    /// The loss at flange torque `t` on this quadrant: `t - g(t)`.
    #[inline(always)]
    pub fn loss(&self, t: S) -> S {
        (S::constant(1.0) - self.c) * t - self.d
    }
}

/// The flange torque `t` of a rolling gear and its loss, from the external torques.
///
/// Newton on both inertias with `a_a = ratio a_b`:
/// `J_a a_a = tau_a - t`, `J_b a_b = tau_b + ratio g(t)`, hence
/// `J_b (tau_a - t) = ratio J_a tau_b + ratio^2 J_a g(t)`. With `g` piecewise linear,
/// continuous and increasing, exactly one quadrant gives a consistent solution: try the one
/// where a drives, else the other.
pub fn rolling_torque<S: Scalar>(
    losses: &Losses<S>,
    dir: f64,
    ratio: Param<S>,
    j_a: Param<S>,
    j_b: Param<S>,
    tau_a: S,
    tau_b: S,
) -> (S, S) {
    let solve = |l: Line<S>| {
        let r2ja = ratio * ratio * j_a;
        (j_b * tau_a - ratio * j_a * tau_b - r2ja * l.d) / (j_b + r2ja * l.c)
    };
    let consistent = |t: S, a_drives: bool| {
        let e = losses.tau_eta(t, dir).value();
        if (dir > 0.0) == a_drives {
            e >= 0.0
        } else {
            e < 0.0
        }
    };
    for a_drives in [true, false] {
        let line = losses.line(dir, a_drives);
        let t = solve(line);
        // The quadrant consistent with t is the one `Losses::loss` finds there: its line.
        if consistent(t, a_drives) {
            return (t, line.loss(t));
        }
    }
    // Only reachable through rounding right at the switching torque: take the switch point.
    let t = losses.bf_a() * dir;
    (t, losses.loss(t, dir))
}

/// Linear interpolation of the table in `|w|` on segment `s` (rows `s` and `s + 1`), which
/// extrapolates beyond the ends of the table from the last two points.
pub fn interpolate<S: Scalar>(
    table: &[[Param<S>; COLUMNS]],
    segment: usize,
    speed: S,
) -> Losses<S> {
    if let [row] = table {
        // Parameters alone: held and lifted as such.
        let l = Losses::of(*row);
        return Losses {
            eta1: S::param(l.eta1),
            eta2: S::param(l.eta2),
            bf1: S::param(l.bf1),
            bf2: S::param(l.bf2),
        };
    }
    let (p, q) = (table[segment], table[segment + 1]);
    let f = (speed - p[0]) / (q[0] - p[0]);
    Losses::of(std::array::from_fn(|j| p[j] + f * (q[j] - p[j])))
}

/// The segment of the table that holds `speed` (the first or last one beyond the ends).
pub fn segment_of(table: &[[f64; COLUMNS]], speed: f64) -> usize {
    if table.len() < 2 {
        return 0;
    }
    let last = table.len() - 2;
    (0..=last)
        .find(|&s| speed < table[s + 1][0])
        .unwrap_or(last)
}

/// Why a table is rejected, as (column name, value, reason).
pub fn check_table(table: &[[f64; COLUMNS]]) -> Result<(), (usize, usize, String)> {
    for (i, row) in table.iter().enumerate() {
        if row.iter().any(|x| !x.is_finite()) {
            let j = row.iter().position(|x| !x.is_finite()).unwrap_or(0);
            return Err((i, j, "must be finite".into()));
        }
        if row[0] < 0.0 {
            return Err((i, 0, "speed breakpoints are |w_a| and must be >= 0".into()));
        }
        if i > 0 && row[0] <= table[i - 1][0] {
            return Err((i, 0, "speed breakpoints must be strictly increasing".into()));
        }
        for j in [1, 2] {
            if !(row[j] > 0.0 && row[j] <= 1.0) {
                return Err((i, j, "efficiencies must be in (0, 1]".into()));
            }
        }
        for j in [3, 4] {
            if row[j] < 0.0 {
                return Err((i, j, "friction torques must be >= 0".into()));
            }
        }
        if row[1] == 1.0 && row[2] == 1.0 && row[3] != row[4] {
            return Err((
                i,
                4,
                "without mesh loss (eta_mf1 = eta_mf2 = 1) the bearing friction cannot depend on the driving side: tau_bf1 must equal tau_bf2".into(),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed's table: eta = 0.25 both ways, tau_bf1 = 0.625, tau_bf2 = 2.5.
    /// A table with bearing friction that is negative on side b: still continuous and dissipative.
    const MILD: Losses = Losses {
        eta1: 0.9,
        eta2: 0.7,
        bf1: 0.1,
        bf2: 0.3,
    };

    const SEED: Losses = Losses {
        eta1: 0.25,
        eta2: 0.25,
        bf1: 0.625,
        bf2: 2.5,
    };

    #[test]
    fn seed_table_splits_friction_as_the_seed_says() {
        assert_eq!(SEED.bf_a(), 0.5);
    }

    #[test]
    fn loss_is_continuous_where_the_driving_side_switches() {
        // Scanned over the whole range of flange torques, not only where the code puts the
        // switch: on each quadrant line the loss has the slope 1 - eta or 1 - 1/eta, so a step
        // of dt in T moves it by at most slope * dt. (Without the driving-side term the loss
        // jumps by 1.875 N.m at T = 0.)
        let dt = 1e-3;
        for losses in [SEED, MILD] {
            let eta = losses.eta1.min(losses.eta2);
            let slope = (1.0 / eta - 1.0).max(1.0 - eta);
            for dir in [1.0, -1.0] {
                for k in -10_000..10_000 {
                    let t = k as f64 * dt;
                    let (here, next) = (losses.loss(t, dir), losses.loss(t + dt, dir));
                    assert!(
                        (next - here).abs() <= slope * dt * (1.0 + 1e-9),
                        "{losses:?} dir {dir}: loss jumps from {here} to {next} at T = {t}"
                    );
                }
            }
        }
    }

    #[test]
    fn loss_dissipates_in_every_quadrant() {
        for losses in [SEED, MILD] {
            for dir in [1.0, -1.0] {
                for k in -200..=200 {
                    let t = k as f64 * 0.05;
                    assert!(losses.loss(t, dir) * dir >= 0.0, "t = {t}, dir = {dir}");
                }
            }
        }
    }

    #[test]
    fn rolling_torque_satisfies_both_newton_equations() {
        let (ratio, j_a, j_b) = (-2.0, 0.3, 0.2);
        for losses in [SEED, MILD] {
            for dir in [1.0, -1.0] {
                for (tau_a, tau_b) in [(1.0, 0.0), (0.0, 1.0), (-3.0, 0.5), (0.2, -4.0), (0.0, 0.0)]
                {
                    let (t, loss) = rolling_torque(&losses, dir, ratio, j_a, j_b, tau_a, tau_b);
                    let a_a = (tau_a - t) / j_a;
                    let a_b = (tau_b + ratio * (t - loss)) / j_b;
                    assert!(
                        (a_a - ratio * a_b).abs() < 1e-12,
                        "{losses:?} {dir} {tau_a} {tau_b}"
                    );
                    // The loss opposes the motion: it never feeds energy in.
                    assert!(
                        loss * dir >= 0.0,
                        "{losses:?} {dir} {tau_a} {tau_b}: {loss}"
                    );
                }
            }
        }
    }

    #[test]
    fn table_interpolates_and_extrapolates_from_the_last_two_points() {
        let table = [
            [0.0, 0.9, 0.8, 0.1, 0.2],
            [10.0, 0.8, 0.7, 0.3, 0.4],
            [20.0, 0.7, 0.6, 0.5, 0.6],
        ];
        assert_eq!(segment_of(&table, 5.0), 0);
        assert_eq!(segment_of(&table, 10.0), 1);
        assert_eq!(segment_of(&table, 99.0), 1);
        let l = interpolate(&table, 0, 5.0);
        assert!((l.eta1 - 0.85).abs() < 1e-15 && (l.bf2 - 0.3).abs() < 1e-15);
        let l = interpolate(&table, 1, 30.0);
        assert!((l.eta1 - 0.6).abs() < 1e-15 && (l.bf1 - 0.7).abs() < 1e-15);
        // Far beyond, efficiencies stay in (0, 1].
        assert_eq!(interpolate(&table, 1, 1e6).eta1, ETA_MIN);
    }

    #[test]
    fn bad_tables_are_rejected() {
        let good = [0.0, 0.9, 0.8, 0.1, 0.2];
        assert!(check_table(&[good]).is_ok());
        let mut t = [good, [0.0, 0.9, 0.8, 0.1, 0.2]];
        assert_eq!(check_table(&t).unwrap_err().0, 1, "non-increasing speeds");
        t[1][0] = 1.0;
        t[1][1] = 1.5;
        assert_eq!(check_table(&t).unwrap_err().1, 1, "efficiency above 1");
        t[1][1] = 0.9;
        t[1][3] = -0.1;
        assert_eq!(check_table(&t).unwrap_err().1, 3, "negative friction");
        assert!(check_table(&[[0.0, 1.0, 1.0, 0.0, 0.0]]).is_ok());
        assert!(check_table(&[[0.0, 1.0, 1.0, 0.1, 0.2]]).is_err());
    }
}
