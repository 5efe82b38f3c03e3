//! The CVT's equations, written once over the number type: as `Cvt<f64>` they are the
//! simulation, as `Cvt<Jet<N>>` the same code gives the exact derivatives (one sweep for every
//! state and input). The belt constraint's roots are found in f64 and move with the knowns by
//! the implicit function theorem (`Scalar::root`, see `belt.rs`).

use crate::belt::Configuration;
use crate::{Cvt, FREE};
use fmu_runtime::{Equations, Param, Scalar, Variables};

/// Accelerations at one instant.
pub(crate) struct Motion<S: Scalar> {
    pub cfg: Configuration<S>,
    /// dw1/dt
    pub a1: S,
    /// dv2/dt
    pub a2: S,
    /// Net generalized force on s2 with the sheaves at rest: what presses them onto a stop.
    pub push: S,
}

impl<S: Scalar> Cvt<S> {
    pub(crate) fn free(&self) -> bool {
        self.sheave_mode == FREE
    }

    /// The sheave speed the equations of motion see: 0 while the sheaves are held on a stop.
    fn sheave_speed(&self) -> S {
        if self.free() {
            self.v2
        } else {
            S::constant(0.0)
        }
    }

    /// The configuration at s2 and the accelerations there; None outside the belt geometry.
    pub(crate) fn motion(&self) -> Option<Motion<S>> {
        let g = &self.geometry;
        let cfg = g.configuration(self.s2, g.on_belt(self.l0, self.s2)?);
        Some(self.motion_at(cfg))
    }

    /// Lagrange with q = (phi1, s2), T = (J1 + J2 rho^2) w1^2/2 + (m2 + m1 s1'^2) v2^2/2:
    /// `(J1 + J2 rho^2) a1 + 2 J2 rho rho' v2 w1 = tau_1 + rho tau_2`,
    /// `(m2 + m1 s1'^2) a2 + m1 s1' s1'' v2^2 - J2 rho rho' w1^2 = F_2 + F_1 s1'`.
    fn motion_at(&self, cfg: Configuration<S>) -> Motion<S> {
        let (rho, rho_p, s1p, s1pp) = (cfg.rho, cfg.rho_p, cfg.s1p, cfg.s1pp);
        let (v2, w1) = (self.sheave_speed(), self.w1);
        let inertia = self.j1 + self.j2 * rho * rho;
        let a1 = (self.tau_1 + rho * self.tau_2 - self.j2 * 2.0 * rho * rho_p * v2 * w1) / inertia;
        let push = self.f_2 + self.f_1 * s1p + self.j2 * rho * rho_p * w1 * w1;
        let mass = self.m2 + self.m1 * s1p * s1p;
        let a2 = if self.free() {
            (push - self.m1 * s1p * s1pp * v2 * v2) / mass
        } else {
            S::constant(0.0)
        };
        Motion { cfg, a1, a2, push }
    }

    /// The secondary speed w2 = rho w1: an output, and der(phi2).
    pub(crate) fn w2_at(&self, cfg: &Configuration<S>) -> S {
        cfg.rho * self.w1
    }

    /// Kinetic energy of the sheaves moving at `v2`, lost in an inelastic stop.
    pub(crate) fn sheave_energy(&self, cfg: &Configuration<S>, v2: S) -> S {
        sheave_energy(self.m1, self.m2, cfg, v2)
    }

    /// What the housing supplies: the angular momentum is J1 w1 + J2 w2 about parallel axes,
    /// with w2 = rho w1, so dw2/dt = rho a1 + rho' v2 w1.
    fn support_torque(&self, m: &Motion<S>) -> S {
        let c = &m.cfg;
        let a2_rot = c.rho * m.a1 + c.rho_p * self.sheave_speed() * self.w1;
        self.j1 * m.a1 + self.j2 * a2_rot - self.tau_1 - self.tau_2
    }

    /// Whether the event iteration at the start stopped the sheaves: a start on a stop,
    /// heading into it (held there since, or released). The f64 model's `initialize` sets
    /// the sheaves free before [`Equations::calculated`], so this is only ever true for the
    /// jets, which take the mode and the energy from the f64 model after its start.
    fn stopped_at_start(&self) -> bool {
        !self.free() || self.energy_impact.value() != 0.0
    }

    /// The energy a stop at the start took: the sheaves' at `v2_start`, at `s2_start`.
    /// Parameters alone: over their own number type.
    fn start_impact_energy(&self) -> Param<S> {
        let g = self.geometry.params();
        let on = if self.stopped_at_start() {
            g.on_belt(self.l0, self.s2_start)
        } else {
            None
        };
        on.map_or(Param::<S>::constant(0.0), |on| {
            let cfg = g.configuration(self.s2_start, on);
            sheave_energy(self.m1, self.m2, &cfg, self.v2_start)
        })
    }
}

/// Kinetic energy of the sheaves moving at `v2`, over any number type.
fn sheave_energy<T: Scalar>(m1: Param<T>, m2: Param<T>, cfg: &Configuration<T>, v2: T) -> T {
    (m2 + m1 * cfg.s1p * cfg.s1p) * 0.5 * v2 * v2
}

impl<S: Scalar> Equations<S> for Cvt<S> {
    fn derivatives(&self, _t: f64, dx: &mut [S]) {
        match self.motion() {
            Some(m) => {
                // der(s2) is the variable v2, which is 0 while the sheaves are held.
                let (s, dx) = (Cvt::STATE, &mut dx[..<Cvt as Variables>::STATES]);
                dx[s.phi1] = self.w1;
                dx[s.w1] = m.a1;
                dx[s.phi2] = self.w2_at(&m.cfg);
                dx[s.s2] = self.v2;
                dx[s.v2] = m.a2;
            }
            // Only reachable on a rejected trial step far outside the checked travel: NaN makes
            // the integrator shrink the step or fail, and a failed step restores the state.
            None => dx.fill(S::constant(f64::NAN)),
        }
    }

    /// The outputs and the state derivatives' variables at s2, with s1 on the belt. Outside
    /// the belt geometry (a rejected trial step) they keep their values.
    fn outputs(&mut self, _t: f64) {
        if let Some(m) = self.motion() {
            let c = m.cfg;
            self.s1 = c.s1;
            self.d1 = c.d1;
            self.d2 = c.d2;
            self.ratio = c.d2 / c.d1;
            self.ds1_ds2 = c.s1p;
            self.w2 = self.w2_at(&c);
            self.v1 = c.s1p * self.v2;
            self.a1 = m.a1;
            self.a2 = m.a2;
            self.tau_support = self.support_torque(&m);
        }
        // The energy the stops took is what the f64 events summed (its value, kept bit for
        // bit): constant between the events, it moves only with the parameters of a stop at
        // the start, E - E_later - E_start = 0.
        let taken = self.energy_impact.value();
        self.energy_impact = S::root(taken, 1.0, |e| e - self.start_impact_energy());
    }

    /// The belt length and the travel of s2 that keeps both sheaves within their limits (s1
    /// falls as s2 rises): each end is its own limit or where the other sheave's limit puts
    /// it on the belt, NaN where the belt cannot reach that limit (refused by `initialize`).
    /// A stop at the start takes the sheaves' speed, whatever v2_start.
    fn calculated(&mut self, _t: f64) {
        self.l0 = self.geometry.l0();
        let g = self.geometry.params();
        let nan = Param::<S>::constant(f64::NAN);
        self.s2_lo = g
            .s2_on_belt(self.s1_max)
            .map_or(nan, |s2| self.s2_min.max(s2));
        self.s2_hi = g
            .s2_on_belt(self.s1_min)
            .map_or(nan, |s2| self.s2_max.min(s2));
        if self.stopped_at_start() {
            self.v2 = S::constant(0.0);
        }
    }
}
