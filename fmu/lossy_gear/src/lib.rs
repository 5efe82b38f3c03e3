//! Gear with mesh efficiency and bearing friction, with the inertias of both flanges.
//!
//! Semantics of the Modelica Standard Library's LossyGear (3.2 and later) with the corrected
//! driving-side decision of the seed `lossy-gear-driving-side-fix.txt`. Equations, state machine
//! and derivation: `documentation.html` next to this file (it ships in the FMU).

mod losses;

use fmu_runtime::declare::{concat_names, Lens};
use fmu_runtime::{
    export_fmu, real, Access, Dual, Experiment, Indicators, Invalid, Model, Scalar, Side, Var,
    Variables, HYSTERESIS,
};
use gear_interface::GearInterface;
use losses::{interpolate, rolling_torque, segment_of, Losses, COLUMNS, MAX_ROWS};

pub const FREE: i32 = 2;
pub const FORWARD: i32 = 1;
pub const STUCK: i32 = 0;
pub const BACKWARD: i32 = -1;

const DYNAMIC: &[&str] = &["w_b", "tau_a", "tau_b"];
/// At the start: the torques, inertias and speed through the whole loss table (the start speed
/// can fall in any row); not the start angle.
const INITIAL: [&str; 57] = concat_names(&[
    &[
        "ratio",
        "J_a",
        "J_b",
        "w_b_start",
        "tau_a",
        "tau_b",
        "nLossRows",
    ],
    &TABLE_ALL,
]);

/// The start values are the LossyGearDemo3 case of the seed: it made the classic model fail at
/// t = 0.5 s.
#[derive(Debug, Clone, Variables)]
pub struct LossyGear {
    #[variables(depends_on(a_a, a_b) = DYNAMIC, initial_depends_on(a_a, a_b) = &INITIAL)]
    #[start(GearInterface::with_parameters(1.0, 0.001, 0.001, 0.0, 10.0))]
    gear: GearInterface,
    #[parameter(name = "nLossRows", start = 1, min = 1.0, max = MAX_ROWS as f64,
                describe = "Number of rows of lossTable in use (1..10); later rows are ignored")]
    n_rows: i32,
    #[variables(with = table_variables, names = &TABLE_ALL)]
    #[start(demo_table())]
    loss_table: [[f64; COLUMNS]; MAX_ROWS],
    #[output(unit = "N.m", depends_on = DYNAMIC, initial_depends_on = &INITIAL,
             describe = "Torque the gear exerts on the a-side inertia through flange a; the constraint torque while stuck")]
    tau_mesh: f64,
    #[output(unit = "N.m", depends_on = DYNAMIC, initial_depends_on = &INITIAL,
             describe = "Loss torque referred to flange a (tauLoss); while stuck, the torque the friction holds")]
    tau_loss: f64,
    #[output(unit = "W", depends_on = DYNAMIC, initial_depends_on = &INITIAL,
             describe = "Power dissipated by mesh and bearing losses, tau_loss*w_a (>= 0)")]
    power_loss: f64,
    #[output(unit = "J", depends_on = ["energy_loss"], initial_depends_on = [], state, derivative = "power_loss",
             describe = "Energy dissipated since the start: the integral of power_loss (state)")]
    energy_loss: f64,
    #[output(start = STUCK, min = BACKWARD as f64, max = FREE as f64, depends_on = [], initial_depends_on = ["ratio", "w_b_start"],
             describe = "2 free (ideal table), 1 forward (w_a > 0), 0 stuck, -1 backward (w_a < 0)")]
    mode: i32,
    #[support_torque(depends_on = DYNAMIC, initial_depends_on = &INITIAL)]
    tau_support: f64,
    #[local(min = 0.0, max = (MAX_ROWS - 2) as f64, describe = "Loss-table interval that holds |w_a| (0-based): between rows segment and segment + 1; changes are events")]
    segment: i32,
}

/// The seed's loss table: the single row `[0, 0.25, 0.25, 0.625, 2.5]`.
fn demo_table() -> [[f64; COLUMNS]; MAX_ROWS] {
    let mut table = [[0.0; COLUMNS]; MAX_ROWS];
    table[0] = [0.0, 0.25, 0.25, 0.625, 2.5];
    table
}

/// The mechanical state of the gear at one instant.
/// The gear's motion in the current mode, in the number type of the equations (`f64` for the
/// simulation, [`Dual`] for its exact derivatives).
struct Motion<S> {
    /// Cut torque at flange a (`flange_a.tau`).
    t: S,
    /// `tauLoss`, referred to flange a; the constraint loss torque while stuck.
    loss: S,
    a_b: S,
    power_loss: S,
}

/// The knowns the equations read; the loss table's rows in use.
struct Knowns<'a, S> {
    ratio: S,
    j_a: S,
    j_b: S,
    w_b: S,
    tau_a: S,
    tau_b: S,
    table: &'a [[S; COLUMNS]],
}

impl<S: Scalar> Knowns<'_, S> {
    fn w_a(&self) -> S {
        self.ratio * self.w_b
    }

    /// Inertia reflected to flange b, J_b + ratio^2 J_a.
    fn j_reflected(&self) -> S {
        self.j_b + self.ratio * self.ratio * self.j_a
    }

    /// While stuck, the loss that holds the gear: tau_a + tau_b/ratio.
    fn stuck_loss(&self) -> S {
        self.tau_a + self.tau_b / self.ratio
    }

    /// The flange torque, the loss, the acceleration and the dissipated power in `mode`, on
    /// loss-table segment `segment` while rolling.
    fn motion(&self, mode: i32, segment: usize) -> Motion<S> {
        let w_a = self.w_a();
        let (t, loss) = match mode {
            STUCK => {
                let zero = S::constant(0.0);
                return Motion {
                    t: self.tau_a,
                    loss: self.stuck_loss(),
                    a_b: zero,
                    power_loss: zero,
                };
            }
            FREE => rolling_torque(
                &Losses::ideal(),
                1.0,
                self.ratio,
                self.j_a,
                self.j_b,
                self.tau_a,
                self.tau_b,
            ),
            _ => {
                let losses = interpolate(self.table, segment, w_a.abs());
                let dir = if mode == FORWARD { 1.0 } else { -1.0 };
                rolling_torque(
                    &losses, dir, self.ratio, self.j_a, self.j_b, self.tau_a, self.tau_b,
                )
            }
        };
        // Both Newton equations summed, so J_a = 0 or J_b = 0 needs no special case.
        let a_b = (self.tau_b + self.ratio * (self.tau_a - loss)) / self.j_reflected();
        Motion {
            t,
            loss,
            a_b,
            power_loss: loss * w_a,
        }
    }
}

impl LossyGear {
    fn table(&self) -> &[[f64; COLUMNS]] {
        &self.loss_table[..(self.n_rows.clamp(1, MAX_ROWS as i32) as usize)]
    }

    /// All rows `[w, 1, 1, 0, 0]`: no loss at any speed.
    fn ideal(&self) -> bool {
        self.table()
            .iter()
            .all(|r| r[1] == 1.0 && r[2] == 1.0 && r[3] == 0.0 && r[4] == 0.0)
    }

    fn knowns(&self) -> Knowns<'_, f64> {
        let g = &self.gear;
        Knowns {
            ratio: g.ratio,
            j_a: g.j_a,
            j_b: g.j_b,
            w_b: g.w_b,
            tau_a: g.tau_a,
            tau_b: g.tau_b,
            table: self.table(),
        }
    }

    fn w_a_of(&self) -> f64 {
        self.knowns().w_a()
    }

    /// `sa`: the loss torque that keeps the gear at rest (tau_a + tau_b/ratio).
    fn stuck_loss(&self) -> f64 {
        self.knowns().stuck_loss()
    }

    /// The friction band at rest, with the zero-speed losses and the flange torque of a stuck
    /// gear (tau_a): `(tauLossMin_m, tauLossMax_p)`. Beyond it the gear breaks away.
    fn band_at_rest(&self) -> (f64, f64) {
        let l0 = interpolate(self.table(), segment_of(self.table(), 0.0), 0.0);
        let margin = 1e-12 * (1.0 + self.stuck_loss().abs());
        (
            l0.loss(self.gear.tau_a, -1.0) - margin,
            l0.loss(self.gear.tau_a, 1.0) + margin,
        )
    }

    /// Motion in mode `mode` with the current states and inputs.
    fn motion(&self, mode: i32) -> Motion<f64> {
        self.knowns().motion(mode, self.segment as usize)
    }
}

/// Access to table cell (I, J), 0-based.
fn cell<L: Lens<Inner = LossyGear>, const I: usize, const J: usize>() -> Access<L::Outer> {
    real!(loss_table[I][J])
}

fn row<L: Lens<Inner = LossyGear>, const I: usize>() -> [Access<L::Outer>; COLUMNS] {
    [
        cell::<L, I, 0>(),
        cell::<L, I, 1>(),
        cell::<L, I, 2>(),
        cell::<L, I, 3>(),
        cell::<L, I, 4>(),
    ]
}

/// The 50 parameters `lossTable[i,j]`: unit, range and meaning per column.
fn table_variables<L: Lens<Inner = LossyGear>>(vars: &mut Vec<Var<L::Outer>>) {
    let columns: [(Option<&'static str>, f64, Option<f64>, &'static str); COLUMNS] = [
        (
            Some("rad/s"),
            0.0,
            None,
            "Loss table column 1: |w_a|, speed breakpoint (strictly increasing)",
        ),
        (
            None,
            0.0,
            Some(1.0),
            "Loss table column 2: eta_mf1, mesh efficiency when flange a drives, in (0, 1]",
        ),
        (
            None,
            0.0,
            Some(1.0),
            "Loss table column 3: eta_mf2, mesh efficiency when flange b drives, in (0, 1]",
        ),
        (
            Some("N.m"),
            0.0,
            None,
            "Loss table column 4: |tau_bf1|, bearing friction (at flange a) when flange a drives",
        ),
        (
            Some("N.m"),
            0.0,
            None,
            "Loss table column 5: |tau_bf2|, bearing friction (at flange a) when flange b drives",
        ),
    ];
    let rows = [
        row::<L, 0>(),
        row::<L, 1>(),
        row::<L, 2>(),
        row::<L, 3>(),
        row::<L, 4>(),
        row::<L, 5>(),
        row::<L, 6>(),
        row::<L, 7>(),
        row::<L, 8>(),
        row::<L, 9>(),
    ];
    for (i, accesses) in rows.into_iter().enumerate() {
        for (j, access) in accesses.into_iter().enumerate() {
            let (unit, min, max, description) = columns[j];
            let mut v = Var::parameter(TABLE_NAMES[i][j], access)
                .min(min)
                .describe(description);
            v.unit = unit;
            v.max = max;
            vars.push(v);
        }
    }
}

impl fmu_runtime::Equations<f64> for LossyGear {
    fn derivatives(&self, _t: f64, dx: &mut [f64]) {
        let m = self.motion(self.mode);
        let (s, dx) = (Self::STATE, &mut dx[..Self::STATES]);
        dx[s.gear.phi_b] = self.gear.w_b;
        dx[s.gear.w_b] = m.a_b;
        dx[s.energy_loss] = m.power_loss;
    }
    fn outputs(&mut self, _t: f64) {
        let m = self.motion(self.mode);
        self.gear.w_a = self.w_a_of();
        self.gear.phi_a = self.gear.ratio * self.gear.phi_b;
        self.gear.a_b = m.a_b;
        self.gear.a_a = self.gear.ratio * m.a_b;
        self.tau_mesh = -m.t;
        self.tau_loss = m.loss;
        self.power_loss = m.power_loss;
        // The inner gear's cut torques: t at flange a, -ratio (t - loss) at flange b; the
        // support takes the rest (stuck: -(tau_a + tau_b)).
        self.tau_support = (self.gear.ratio - 1.0) * m.t - self.gear.ratio * m.loss;
    }
}

impl Model for LossyGear {
    const NAME: &'static str = "LossyGear";
    const DESCRIPTION: &'static str =
        "Gear with mesh efficiency and bearing friction (Stuck/Forward/Backward), carrying the inertias of both flanges";
    const DOCUMENTATION: &'static str = include_str!("../documentation.html");
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0);
    const EVENT_INDICATORS: usize = 4;

    fn initialize(&mut self, _t: f64) -> Result<(), Invalid> {
        self.gear.reflected_inertia()?;
        if !(1..=MAX_ROWS as i32).contains(&self.n_rows) {
            return Err(Invalid::new(
                "nLossRows",
                f64::from(self.n_rows),
                "must be in 1..10",
            ));
        }
        if let Err((i, j, reason)) = losses::check_table(self.table()) {
            return Err(Invalid::new(
                TABLE_NAMES[i][j],
                self.loss_table[i][j],
                reason,
            ));
        }
        self.energy_loss = 0.0;
        let w_a = self.w_a_of();
        self.segment = segment_of(self.table(), w_a.abs()) as i32;
        // The classic initial() rule: moving means rolling in that direction, rest means
        // stuck; the event iteration that follows decides a breakaway at rest.
        self.mode = if self.ideal() {
            FREE
        } else if w_a > 0.0 {
            FORWARD
        } else if w_a < 0.0 {
            BACKWARD
        } else {
            STUCK
        };
        Ok(())
    }

    /// Rolling: the speed w_a (on the side of the direction) and the loss table's breakpoints
    /// around |w_a|, so that no step crosses a kink of the losses. Stuck: the torque the
    /// friction holds against the band it can hold. Hysteresis: 1e-12 rad/s and 1e-12 N.m.
    fn event_indicators(&self, _t: f64, z: &mut Indicators) {
        (0..4).for_each(|i| z.unused(i));
        let w_a = self.w_a_of();
        match self.mode {
            FORWARD | BACKWARD => {
                z.set(0, w_a, Side::of(self.mode == FORWARD), HYSTERESIS);
                let (s, table) = (self.segment as usize, self.table());
                if s > 0 {
                    z.set(2, w_a.abs() - table[s][0], Side::Positive, HYSTERESIS);
                }
                if s + 2 < table.len() {
                    z.set(3, table[s + 1][0] - w_a.abs(), Side::Positive, HYSTERESIS);
                }
            }
            STUCK => {
                let (min, max) = self.band_at_rest();
                let sa = self.stuck_loss();
                z.set(0, sa - max, Side::Negative, HYSTERESIS);
                z.set(1, sa - min, Side::Positive, HYSTERESIS);
            }
            _ => {}
        }
    }

    fn event_update(&mut self, _t: f64) -> Result<bool, Invalid> {
        if self.ideal() {
            let changed = self.mode != FREE;
            self.mode = FREE;
            return Ok(changed);
        }
        let w_a = self.w_a_of();
        match self.mode {
            FORWARD | BACKWARD => {
                let dir = if self.mode == FORWARD { 1.0 } else { -1.0 };
                // Rolling ends where the speed reaches zero; the gear comes to rest at exactly
                // zero speed. At zero speed it keeps rolling only if it accelerates onward.
                let reversed = w_a * dir < 0.0;
                let stops_here =
                    w_a == 0.0 && self.motion(self.mode).a_b * self.gear.ratio * dir <= 0.0;
                if reversed || stops_here {
                    self.gear.w_b = 0.0;
                    self.mode = STUCK;
                    self.segment = segment_of(self.table(), 0.0) as i32;
                    return Ok(true);
                }
                // A breakpoint reached exactly counts as crossed in the direction |w_a| is
                // heading (see Model::event_update); beyond it counts either way.
                let (s, table, speed) = (self.segment as usize, self.table(), w_a.abs());
                let rising = w_a * self.gear.ratio * self.motion(self.mode).a_b > 0.0;
                let below = s > 0 && (speed < table[s][0] || (speed == table[s][0] && !rising));
                let above = s + 2 < table.len()
                    && (speed > table[s + 1][0] || (speed == table[s + 1][0] && rising));
                if below || above {
                    self.segment += if below { -1 } else { 1 };
                    return Ok(true);
                }
            }
            STUCK => {
                // Both directions are looked at, with the losses at w = 0+ and w = 0-.
                let (min, max) = self.band_at_rest();
                let sa = self.stuck_loss();
                // The band carries a margin, so reaching its edge exactly already means a
                // (tiny) acceleration onward: zero counts as crossed.
                if sa >= max || sa <= min {
                    self.mode = if sa >= max { FORWARD } else { BACKWARD };
                    self.segment = segment_of(self.table(), 0.0) as i32;
                    return Ok(true);
                }
            }
            _ => {
                // A table that stopped being ideal cannot happen (parameters are fixed), but
                // decide as at initialization rather than stay Free.
                self.mode = if w_a > 0.0 {
                    FORWARD
                } else if w_a < 0.0 {
                    BACKWARD
                } else {
                    STUCK
                };
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The segment lies between two rows in use; the gear is free exactly when the table is
    /// ideal, and stuck only at rest.
    fn check_state(&self) -> Result<(), Invalid> {
        let last = (self.table().len().max(2) - 2) as i32;
        if self.segment > last {
            return Err(Invalid::new(
                "segment",
                f64::from(self.segment),
                format!(
                    "the loss table's {} rows in use have segments 0 to {last}",
                    self.n_rows
                ),
            ));
        }
        if (self.mode == FREE) != self.ideal() {
            let reason = if self.ideal() {
                "the loss table is ideal: the gear is free (2)"
            } else {
                "free (2) needs an ideal loss table"
            };
            return Err(Invalid::new("mode", f64::from(self.mode), reason));
        }
        if self.mode == STUCK && self.gear.w_b != 0.0 {
            return Err(Invalid::new(
                "w_b",
                self.gear.w_b,
                "the gear is stuck (mode 0): it does not turn",
            ));
        }
        Ok(())
    }

    type Jets = fmu_runtime::Unlifted;

    const PROVIDES_DERIVATIVES: bool = true;

    /// The same equations in dual numbers, in the mode and on the loss-table segment the gear
    /// is in (both change only at events). The table's cells are knowns in Initialization Mode.
    fn tangent(&self, _t: f64, seed: &Self, tangent: &mut Self) {
        let dual = Dual::seeded;
        let table: [[Dual; COLUMNS]; MAX_ROWS] = std::array::from_fn(|i| {
            std::array::from_fn(|j| dual(self.loss_table[i][j], seed.loss_table[i][j]))
        });
        let (g, d) = (&self.gear, &seed.gear);
        let k = Knowns {
            ratio: dual(g.ratio, d.ratio),
            j_a: dual(g.j_a, d.j_a),
            j_b: dual(g.j_b, d.j_b),
            w_b: dual(g.w_b, d.w_b),
            tau_a: dual(g.tau_a, d.tau_a),
            tau_b: dual(g.tau_b, d.tau_b),
            table: &table[..self.table().len()],
        };
        let m = k.motion(self.mode, self.segment as usize);
        let t = &mut tangent.gear;
        t.w_a = k.w_a().eps;
        t.phi_a = (k.ratio * dual(g.phi_b, d.phi_b)).eps;
        (t.a_b, t.a_a) = (m.a_b.eps, (k.ratio * m.a_b).eps);
        (tangent.tau_mesh, tangent.tau_loss) = (-m.t.eps, m.loss.eps);
        tangent.power_loss = m.power_loss.eps;
        tangent.tau_support = ((k.ratio - 1.0) * m.t - k.ratio * m.loss).eps;
    }
}

/// `lossTable[i,j]` names by 0-based row and column, for error messages.
/// The names `table_variables` declares.
const TABLE_ALL: [&str; COLUMNS * MAX_ROWS] = concat_names(&[
    &TABLE_NAMES[0],
    &TABLE_NAMES[1],
    &TABLE_NAMES[2],
    &TABLE_NAMES[3],
    &TABLE_NAMES[4],
    &TABLE_NAMES[5],
    &TABLE_NAMES[6],
    &TABLE_NAMES[7],
    &TABLE_NAMES[8],
    &TABLE_NAMES[9],
]);

const TABLE_NAMES: [[&str; COLUMNS]; MAX_ROWS] = {
    macro_rules! row {
        ($n:literal) => {
            [
                concat!("lossTable[", $n, ",1]"),
                concat!("lossTable[", $n, ",2]"),
                concat!("lossTable[", $n, ",3]"),
                concat!("lossTable[", $n, ",4]"),
                concat!("lossTable[", $n, ",5]"),
            ]
        };
    }
    [
        row!("1"),
        row!("2"),
        row!("3"),
        row!("4"),
        row!("5"),
        row!("6"),
        row!("7"),
        row!("8"),
        row!("9"),
        row!("10"),
    ]
};

export_fmu!(LossyGear);

#[cfg(test)]
mod tests {
    use super::*;

    /// n rows in use have the n - 1 segments 0 to n - 2 between them: a state (restored, say)
    /// in a segment past them, which would interpolate beyond the table, is refused naming
    /// `segment`; every segment up to the last is accepted.
    #[test]
    fn a_segment_past_the_rows_in_use_is_refused() {
        for n_rows in 2..=6 {
            for segment in 0..=n_rows - 1 {
                let gear = LossyGear {
                    n_rows,
                    segment,
                    ..LossyGear::default()
                };
                let result = gear.check_state();
                if segment <= n_rows - 2 {
                    assert!(
                        result.is_ok(),
                        "{n_rows} rows, segment {segment}: {result:?}"
                    );
                } else {
                    let error = format!("{:?}", result.expect_err("refused"));
                    assert!(error.contains("segment"), "{error}");
                }
            }
        }
    }

    /// A gear with a three-row table: breakpoints at 0, 5 and 10 rad/s.
    fn three_rows() -> LossyGear {
        let mut gear = LossyGear {
            n_rows: 3,
            ..LossyGear::default()
        };
        gear.loss_table[..3].copy_from_slice(&[
            [0.0, 0.9, 0.9, 0.1, 0.1],
            [5.0, 0.8, 0.8, 0.2, 0.2],
            [10.0, 0.7, 0.7, 0.3, 0.3],
        ]);
        gear
    }

    /// The classic initial() rule: moving means rolling that way, rest means stuck.
    #[test]
    fn it_starts_rolling_the_way_it_moves_and_stuck_at_rest() {
        for (w_b, mode) in [(1.0, FORWARD), (-1.0, BACKWARD), (0.0, STUCK)] {
            let mut gear = three_rows();
            gear.gear.w_b = w_b;
            gear.initialize(0.0).expect("valid");
            assert_eq!(gear.mode, mode, "w_b {w_b}");
        }
    }

    /// Rolling forward exactly at the 5 rad/s breakpoint, the segment is the one the speed is
    /// heading into: below it when slowing down, above it (unchanged, 1) when speeding up.
    #[test]
    fn at_a_breakpoint_the_segment_follows_the_speed() {
        for (tau_a, segment) in [(-1.0, 0), (1.0, 1)] {
            let mut gear = three_rows();
            gear.gear.w_b = 5.0;
            gear.gear.tau_a = tau_a;
            // Heavy: slow accelerations (|a| << 5 rad/s^2), so speed and acceleration differ.
            (gear.gear.j_a, gear.gear.j_b) = (100.0, 100.0);
            gear.mode = FORWARD;
            gear.segment = 1;
            gear.event_update(0.0).expect("valid");
            assert_eq!(gear.segment, segment, "tau_a {tau_a}");
        }
    }
}
