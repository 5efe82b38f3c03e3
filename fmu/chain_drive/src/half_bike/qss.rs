//! The quasi-steady-state chain: the wheel is the state; the chain's stretch and the swing
//! arm follow it algebraically.

use super::{ArmLoad, Bike, Inputs, Motion, Rest, Switch, V3};
use super::{LOWER, UPPER};
use fmu_runtime::{Param, Scalar};

impl<S: Scalar> Bike<S> {
    /// The wheel's acceleration in the QSS model and the signed tension `T_u - T_l` from the
    /// wheel's equation; `rho = r_ws/r_ds`.
    #[inline(always)]
    fn qss_wheel(&self, w_rw: S, u: Inputs<S>) -> (Param<S>, S, S) {
        let l = &self.frame;
        let rho = l.r_ws / l.r_ds;
        let (x, y) = self.qss_forces(w_rw, u);
        let a_rw = (x + rho * y) / (self.j_rw + rho * rho * self.j_ds);
        (rho, a_rw, (self.j_rw * a_rw - x) / l.r_ws)
    }

    /// Quasi-steady-state chain: the wheel is the state; the chain's extension and the swing
    /// arm follow it algebraically (`w_sa = 0`). The taut run is `mode`; the swing arm's angle
    /// balances its load ([`Self::qss_arm`], from the state `q[1]`).
    #[inline(always)]
    pub fn qss(&self, q: V3<S>, w: V3<S>, u: Inputs<S>, rest: Rest<S>, mode: i32) -> Motion<S> {
        let l = &self.frame;
        let zero = S::constant(0.0);
        let w_rw = w[2];
        let (rho, a_rw, t_s) = self.qss_wheel(w_rw, u);
        let (t_u, t_l) = (t_s.max(zero), (-t_s).max(zero));
        let load = ArmLoad {
            g_sa: self.g_sa(),
            drag: (u.c_brake + self.gamma_rw) * w_rw,
            t_u,
            t_l,
        };
        let th_sa = self.qss_arm(&load, q[1].value());
        let r = l.runs(th_sa);
        let wheel = l.r_ws * (th_sa + q[2]);
        // The taut run stretched by |T_s|/k (signed: T_s/k upper, -T_s/k lower).
        let th_ds = if mode == LOWER {
            (r.g_l[0] + wheel - rest.l_l0 + t_s / self.k) / l.r_ds
        } else {
            (rest.l_u0 + t_s / self.k - r.g_u[0] + wheel) / l.r_ds
        };
        let qq = [th_ds, th_sa, q[2]];
        let (l_u, l_l) = self.lengths_at(&r, qq);
        let speeds = [rho * w_rw, zero, w_rw];
        Motion {
            q: qq,
            speeds,
            dw: [rho * a_rw, zero, a_rw],
            t_u,
            t_l,
            e_u: l_u - rest.l_u0,
            e_l: l_l - rest.l_l0,
            energy_chain: t_s * 0.5 * t_s / self.k,
            power_dissipated: self.gamma_ds * speeds[0] * speeds[0]
                + (u.c_brake + self.gamma_rw) * w_rw * w_rw,
            indicators: [t_s, S::constant(1.0)],
        }
    }

    /// `X` and `Y` of the QSS model: the wheel's and the sprocket's generalized forces other
    /// than the chain's, with the sprocket turning at `rho w_rw`.
    #[inline(always)]
    fn qss_forces(&self, w_rw: S, u: Inputs<S>) -> (S, S) {
        let rho = self.frame.r_ws / self.frame.r_ds;
        (
            u.tau_load - (u.c_brake + self.gamma_rw) * w_rw,
            u.tau_eng - self.gamma_ds * rho * w_rw,
        )
    }

    /// The QSS swing arm's balance at `th` and its slope: `h = tau_preload
    /// - k_susp (th - th_ref) - G_sa cos(th) + (c_brake + gamma_rw) w_rw - T_u G_u'(th)
    /// - T_l G_l'(th)` (the sa and rw rows of the forces agree, so `a_sa = 0` where h is 0),
    /// and `dh/dth`.
    #[inline(always)]
    fn arm_balance(&self, th: S, load: &ArmLoad<S>) -> (S, S) {
        let r = self.frame.runs(th);
        let (s, c) = th.sin_cos();
        let h = self.tau_preload - self.k_susp * (th - self.theta_sa_ref) - load.g_sa * c
            + load.drag
            - load.t_u * r.g_u[1]
            - load.t_l * r.g_l[1];
        let dh = -self.k_susp + load.g_sa * s - load.t_u * r.g_u[2] - load.t_l * r.g_l[2];
        (h, dh)
    }

    /// The QSS swing-arm angle at which its balance `h` ([`Self::arm_balance`]) is 0: Newton's
    /// from `guess` in f64, moving with the knowns by the implicit function theorem
    /// (`dth = -h_knowns / h_th`, `h_knowns` from `h` with the angle held).
    #[inline(always)]
    pub fn qss_arm(&self, load: &ArmLoad<S>, guess: f64) -> S {
        let (th, slope) = self.value().arm_newton(&load.value(), guess);
        S::root(th, slope, |th| self.arm_balance(th, load).0)
    }
}

impl Bike<f64> {
    /// Newton's root of the swing arm's balance from `guess`, and the slope `dh/dth` of its
    /// last iteration (at the root to within its last step, 1e-15 relative).
    #[inline(always)]
    fn arm_newton(&self, load: &ArmLoad, guess: f64) -> (f64, f64) {
        let mut th = if guess.is_finite() {
            guess
        } else {
            self.theta_sa_ref
        };
        let mut slope = f64::NAN;
        for _ in 0..50 {
            let (h, dh) = self.arm_balance(th, load);
            slope = dh;
            let step = h / dh;
            th -= step;
            // A NaN step ends the iteration too.
            if step.is_nan() || step.abs() <= 1e-15 * (1.0 + th.abs()) {
                break;
            }
        }
        (th, slope)
    }

    /// QSS: the taut run follows the sign of the tension (held where it is zero).
    #[inline(always)]
    pub fn qss_switch(&self, q: V3, w: V3, u: Inputs, mode: i32) -> Option<Switch> {
        let (_, _, t_s) = self.qss_wheel(w[2], u);
        let new = if t_s > 0.0 {
            UPPER
        } else if t_s < 0.0 {
            LOWER
        } else {
            mode
        };
        (new != mode).then_some(Switch {
            mode: new,
            q,
            w,
            impact: None,
        })
    }
}
