//! The independent solution the breakaway and reversal runs are compared with, built from physical
//! elements rather than the FMU's quadrant rule, and the bisection and Simpson quadrature it (and
//! the comparison) integrates with.

use super::*;

/// An independent solution, built from physical elements instead of the FMU's quadrant rule and
/// its `tau_eta` shortcut: a Coulomb bearing `bf_a` on shaft a, a mesh that passes power with
/// efficiency `eta1` when shaft a drives it and `eta2` when shaft b does, and a Coulomb bearing
/// `bf_b` on shaft b (torques referred to flange a). Rolling forward with the mesh driven by a,
/// flange a's torque `t` loses `bf_a`, the mesh passes `eta1 (t - bf_a)`, bearing b takes `bf_b`:
/// `t - g = (1 - eta1) t + eta1 bf_a + bf_b`, the MSL's quadrant 1 when `bf1 = eta1 bf_a + bf_b`.
/// Driven by b, the mesh needs `(t - bf_a) / eta2` from shaft b: quadrant 2 when
/// `bf2 = bf_a / eta2 + bf_b`. Backward, the bearings turn their sign: quadrants 3 and 4 with the
/// same pair. So the table's `(bf1, bf2)` fix the two bearings. Which side drives the mesh is
/// not assumed: both are solved and the one whose mesh power has the assumed sign is kept.
/// At rest, a direction is taken when rolling that way accelerates that way, else it sticks.
/// Dissipation is summed element by element, never through a loss torque.
pub(crate) struct Reference {
    ratio: f64,
    j_a: f64,
    j_b: f64,
    eta1: f64,
    eta2: f64,
    pub(crate) bf_a: f64,
    pub(crate) bf_b: f64,
}

/// The rolling gear at one instant.
pub(crate) struct Rolling {
    /// Acceleration of flange a.
    pub(crate) a_a: f64,
    /// Dissipated power per unit speed of flange a: bearings plus mesh.
    pub(crate) dissipation_per_speed: f64,
}

impl Reference {
    pub(crate) fn new(ratio: f64, j_a: f64, j_b: f64, [_, eta1, eta2, bf1, bf2]: [f64; 5]) -> Self {
        // bf1 = eta1 bf_a + bf_b and bf2 = bf_a / eta2 + bf_b, by Cramer's rule.
        let det = eta1 - 1.0 / eta2;
        let bf_a = (bf1 - bf2) / det;
        let bf_b = (bf2 * eta1 - bf1 / eta2) / det;
        Reference {
            ratio,
            j_a,
            j_b,
            eta1,
            eta2,
            bf_a,
            bf_b,
        }
    }

    /// Rolling in direction `dir` (the sign of w_a). Referred to flange a, with `m` the torque
    /// shaft a hands to the mesh and `k` the mesh's torque ratio (`eta1` a-driven, `1/eta2`
    /// b-driven): `J_a a = tau_a - dir bf_a - m`, `J_b/r^2 a = tau_b/r + k m - dir bf_b`.
    pub(crate) fn rolling(&self, tau_a: f64, tau_b: f64, dir: f64) -> Rolling {
        let r = self.ratio;
        let j_b = self.j_b / (r * r);
        let solve = |k: f64| {
            let a = (tau_b / r + k * (tau_a - dir * self.bf_a) - dir * self.bf_b)
                / (j_b + k * self.j_a);
            (a, tau_a - dir * self.bf_a - self.j_a * a)
        };
        let (a, m) = solve(self.eta1);
        // Kept when shaft a really feeds the mesh (power m w_a >= 0); else shaft b drives.
        let (k, (a, m)) = if m * dir >= 0.0 {
            (self.eta1, (a, m))
        } else {
            (1.0 / self.eta2, solve(1.0 / self.eta2))
        };
        assert!(
            (m * dir >= 0.0) == (k == self.eta1) || m.abs() < 1e-12,
            "no consistent mesh mode at tau_a = {tau_a}, tau_b = {tau_b}"
        );
        Rolling {
            a_a: a,
            // Bearings dir (bf_a + bf_b) w_a; mesh: what goes in minus what comes out, (1 - k) m w_a.
            dissipation_per_speed: dir * (self.bf_a + self.bf_b) + (1.0 - k) * m,
        }
    }

    /// The mode a gear at rest takes: FORWARD, BACKWARD or STUCK.
    pub(crate) fn at_rest(&self, tau_a: f64, tau_b: f64) -> i32 {
        if self.rolling(tau_a, tau_b, 1.0).a_a > 0.0 {
            FORWARD
        } else if self.rolling(tau_a, tau_b, -1.0).a_a < 0.0 {
            BACKWARD
        } else {
            STUCK
        }
    }
}

pub(crate) fn bisect(mut lo: f64, mut hi: f64, f: impl Fn(f64) -> f64) -> f64 {
    let f_lo = f(lo);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if (f(mid) > 0.0) == (f_lo > 0.0) {
            lo = mid
        } else {
            hi = mid
        }
    }
    hi
}

pub(crate) fn simpson(f: &impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    (b - a) / 6.0 * (f(a) + 4.0 * f(0.5 * (a + b)) + f(b))
}
