//! The independent solution the sweeps compare with: the transmission's equations and the documented
//! loss law, integrated here with classic RK4.

use super::*;

/// A configuration of the transmission for the sweeps; `eta: None` is the loss-free model.
#[derive(Clone, Copy)]
pub(crate) struct Config {
    pub(crate) k_v: f64,
    pub(crate) direction: i32,
    pub(crate) eta: Option<f64>,
    pub(crate) w_th: f64,
    pub(crate) mu_b: f64,
    pub(crate) mu_f: f64,
}

pub(crate) const IDEAL: Config = Config {
    k_v: K_V,
    direction: 1,
    eta: None,
    w_th: 1.0,
    mu_b: 0.0,
    mu_f: 0.0,
};

/// The follower torque from the documented implicit loss law, solved by bisection rather than
/// with the FMU's closed form: `tau_F - |tau_F| (1 - eta) tanh(4 w_F / w_th) = x`, where
/// `x = -s r tau_B` is the base torque referred to the follower. The left side increases
/// strictly in `tau_F`, and `|tau_F| <= |x| / eta`.
pub(crate) fn follower_torque(x: f64, w_f: f64, eta: f64, w_th: f64) -> f64 {
    let c = (1.0 - eta) * (4.0 * w_f / w_th).tanh();
    let (mut lo, mut hi) = (-x.abs() / eta - 1e-300, x.abs() / eta + 1e-300);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid - mid.abs() * c < x {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The transmission's equations, integrated independently with classic RK4 at `dt`; every 1 ms
/// the state `[w_B, w_F, phi, dissipated energy]`, the dissipation integrated from its own
/// terms (spring damping, mesh loss times follower speed, bearings).
pub(crate) fn reference_sweep(
    t_end: f64,
    r: impl Fn(f64) -> f64,
    tau_b: f64,
    tau_f: f64,
    cfg: Config,
    dt: f64,
) -> Vec<(f64, [f64; 4])> {
    let (j_b, j_f) = (0.01, 0.02);
    let s = f64::from(cfg.direction);
    let f = |t: f64, x: [f64; 4]| {
        let [w_b, w_f, phi, _] = x;
        let phi_dot = s * r(t) * w_f - w_b;
        let spring = -K_P * phi - cfg.k_v * phi_dot;
        let referred = -s * r(t) * spring;
        let mesh = match cfg.eta {
            Some(eta) => follower_torque(referred, w_f, eta, cfg.w_th),
            None => referred,
        };
        let tb = spring + cfg.mu_b * w_b;
        let tf = mesh + cfg.mu_f * w_f;
        let dissipation = cfg.k_v * phi_dot * phi_dot
            + (mesh - referred) * w_f
            + cfg.mu_b * w_b * w_b
            + cfg.mu_f * w_f * w_f;
        [(tau_b - tb) / j_b, (tau_f - tf) / j_f, phi_dot, dissipation]
    };
    let every = (1e-3 / dt).round() as usize;
    let (mut x, mut out) = ([0.0; 4], Vec::new());
    let n = (t_end / dt).round() as usize;
    let add = |a: [f64; 4], b: [f64; 4], c: f64| [0, 1, 2, 3].map(|i| a[i] + c * b[i]);
    for k in 0..n {
        let t = k as f64 * dt;
        let k1 = f(t, x);
        let k2 = f(t + dt / 2.0, add(x, k1, dt / 2.0));
        let k3 = f(t + dt / 2.0, add(x, k2, dt / 2.0));
        let k4 = f(t + dt, add(x, k3, dt));
        x = [0, 1, 2, 3].map(|i| x[i] + dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]));
        if (k + 1) % every == 0 {
            out.push(((k + 1) as f64 * dt, x));
        }
    }
    out
}
