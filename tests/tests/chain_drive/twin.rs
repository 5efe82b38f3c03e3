//! The half-bike's full elastic model written here, to compare with the FMU's and to show what the
//! thesis's printed run lengths do to the energy balance.

use super::*;

/// The half-bike's full elastic model written here, lossless, from Lagrange's equations in
/// q = (th_ds, th_sa, th_rw): kinetic energy J_ds w_ds^2/2 + I_sa w_sa^2/2 + J_rw (w_sa + w_rw)^2/2,
/// gravity G_sa sin(th_sa), the suspension about th_sa = 0 with the weight as its preload, the
/// load on the wheel's absolute angle, and each run pulling with k max(e, 0) along the gradient
/// of its exact length (the material-point virtual work of the thesis's (2.12)). `printed`
/// measures the extension with the thesis's printed run lengths (2.3)-(2.5) instead, which
/// drop the wrap angles' change with the swing arm.
pub(crate) struct Twin {
    printed: bool,
    rest: (f64, f64),
}

const K_CHAIN: f64 = 1e5;
const I_SA: f64 = 0.4 + 7.0 * 0.35 * 0.35 + 15.0 * 0.7 * 0.7;
const G_SA: f64 = 9.81 * (7.0 * 0.35 + 15.0 * 0.7);
const K_SUSP: f64 = 1e4;

impl Twin {
    pub(crate) fn new(printed: bool) -> Twin {
        let mut twin = Twin {
            printed,
            rest: (0.0, 0.0),
        };
        let (u, l) = twin.lengths([0.0; 3]);
        // The upper run just taut, the slack in the lower one (the FMU's start).
        twin.rest = (u, l + 0.002);
        twin
    }

    /// Run lengths between material marks, exact (tangent construction) or as printed.
    fn lengths(&self, q: [f64; 3]) -> (f64, f64) {
        let turn = R_DS * q[0] - R_WS * q[2];
        if self.printed {
            let span = spans(q[1]);
            (span + turn, span - turn)
        } else {
            let (u, l) = independent_lengths(q[1]);
            (u + turn, l - turn)
        }
    }

    fn extensions(&self, q: [f64; 3]) -> (f64, f64) {
        let (u, l) = self.lengths(q);
        (u - self.rest.0, l - self.rest.1)
    }

    /// Accelerations under the inputs [tau_eng, tau_load].
    fn accelerations(&self, q: [f64; 3], u: [f64; 2]) -> [f64; 3] {
        let (e_u, e_l) = self.extensions(q);
        let (t_u, t_l) = (K_CHAIN * e_u.max(0.0), K_CHAIN * e_l.max(0.0));
        let h = 1e-6;
        let (up, lo) = (independent_lengths(q[1] + h), independent_lengths(q[1] - h));
        let dl = ((up.0 - lo.0) / (2.0 * h), (up.1 - lo.1) / (2.0 * h));
        let f = [
            u[0] - R_DS * (t_u - t_l),
            G_SA - K_SUSP * q[1] - G_SA * q[1].cos() + u[1] - t_u * dl.0 - t_l * dl.1,
            u[1] + R_WS * (t_u - t_l),
        ];
        let a_sa = (f[1] - f[2]) / I_SA;
        [f[0] / J_DS, a_sa, f[2] / J_RW - a_sa]
    }

    /// Kinetic + gravity + suspension + chain energy, with the chain's energy from the same
    /// extensions that set its tension.
    pub(crate) fn energy(&self, x: &[f64; 6]) -> f64 {
        let (e_u, e_l) = self.extensions([x[0], x[1], x[2]]);
        0.5 * (J_DS * x[3] * x[3] + I_SA * x[4] * x[4] + J_RW * (x[4] + x[5]).powi(2))
            + G_SA * (x[1].sin() - x[1])
            + 0.5 * K_SUSP * x[1] * x[1]
            + 0.5 * K_CHAIN * (e_u.max(0.0).powi(2) + e_l.max(0.0).powi(2))
    }

    /// Classic RK4 over `h` with the inputs held.
    pub(crate) fn step(&self, x: &mut [f64; 6], u: [f64; 2], h: f64) {
        let f = |x: &[f64; 6]| {
            let a = self.accelerations([x[0], x[1], x[2]], u);
            [x[3], x[4], x[5], a[0], a[1], a[2]]
        };
        let add = |x: &[f64; 6], k: &[f64; 6], c: f64| std::array::from_fn(|i| x[i] + c * k[i]);
        let k1 = f(x);
        let k2 = f(&add(x, &k1, h / 2.0));
        let k3 = f(&add(x, &k2, h / 2.0));
        let k4 = f(&add(x, &k3, h));
        for i in 0..6 {
            x[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
}
