//! The half-bike's equations of motion under the three chain models.
//!
//! Coordinates `q = (th_ds, th_sa, th_rw)`, `th_rw` relative to the swing arm; speeds `w`.
//! Mass matrix `M = [[J_ds, 0, 0], [0, I_sa + J_rw, J_rw], [0, J_rw, J_rw]]`, constant, so there
//! are no velocity terms. Generalized forces other than the chain's:
//! `u_ds = tau_eng - gamma_ds w_ds`,
//! `u_sa = tau_preload - k_susp (th_sa - th_ref) - c_susp w_sa - G_sa cos(th_sa) + tau_load`,
//! `u_rw = tau_load - (c_brake + gamma_rw) w_rw`.
//! A run of tension `T` adds `-T grad L` (its length `L` from [`crate::geometry`]).

use crate::geometry::{Frame, Layout, Runs};
use fmu_runtime::{Dual, Invalid, Scalar, Variables};

pub const UPPER: i32 = 1;
pub const LOWER: i32 = -1;
pub const FREE: i32 = 0;
pub const BOTH: i32 = 2;

type V3<S = f64> = [S; 3];

fn dot<S: Scalar>(a: V3<S>, b: V3<S>) -> S {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// The parameters of the half-bike and its chain. The start values are Table 2.2 of the
/// thesis; chain, suspension and friction values are ours (the thesis gives none): see the
/// documentation.
#[derive(Debug, Clone, Copy, PartialEq, Variables)]
pub struct HalfBike {
    #[parameter(
        name = "J_ds",
        start = 0.005,
        unit = "kg.m2",
        min = 0.0,
        describe = "Inertia of the drive sprocket and what turns with it (> 0)"
    )]
    pub j_ds: f64,
    #[parameter(
        name = "J_sa",
        start = 0.4,
        unit = "kg.m2",
        min = 0.0,
        describe = "Inertia of the swing arm about its centre of mass"
    )]
    pub j_sa: f64,
    #[parameter(
        name = "J_rw",
        start = 0.7,
        unit = "kg.m2",
        min = 0.0,
        describe = "Inertia of the rear wheel with its sprocket about the axle (> 0)"
    )]
    pub j_rw: f64,
    #[parameter(
        start = 7.0,
        unit = "kg",
        min = 0.0,
        describe = "Mass of the swing arm"
    )]
    pub m_sa: f64,
    #[parameter(
        start = 15.0,
        unit = "kg",
        min = 0.0,
        describe = "Mass of the rear wheel"
    )]
    pub m_rw: f64,
    #[variables]
    pub layout: Layout,
    #[parameter(
        name = "k_chain",
        start = 1e5,
        unit = "N/m",
        min = 0.0,
        describe = "Stiffness of each chain run (> 0; full and QSS models)"
    )]
    pub k: f64,
    #[parameter(
        name = "c_chain",
        unit = "N.s/m",
        min = 0.0,
        describe = "Damping of each chain run while taut (full model)"
    )]
    pub c: f64,
    #[parameter(
        start = 0.002,
        unit = "m",
        min = 0.0,
        describe = "Chain length beyond the taut geometry at the start (> 0), all of it in the lower run"
    )]
    pub slack: f64,
    #[parameter(start = 9.81, unit = "m/s2", min = 0.0, describe = "Gravity (0: off)")]
    pub g: f64,
    #[parameter(
        start = 1e4,
        unit = "N.m/rad",
        min = 0.0,
        describe = "Suspension rate about the pivot (> 0)"
    )]
    pub k_susp: f64,
    #[parameter(
        start = 200.0,
        unit = "N.m.s/rad",
        min = 0.0,
        describe = "Suspension damping about the pivot"
    )]
    pub c_susp: f64,
    // The weight of arm and wheel about the pivot: theta_sa_ref is then the rest position.
    #[parameter(start = 9.81 * (7.0 * 0.35 + 15.0 * 0.7), unit = "N.m", describe = "Suspension torque at theta_sa_ref, pushing the wheel down (default: the weight of arm and wheel at g = 9.81)")]
    pub tau_preload: f64,
    #[parameter(
        unit = "rad",
        describe = "Swing-arm angle where the suspension torque is tau_preload"
    )]
    pub theta_sa_ref: f64,
    #[parameter(
        start = 1e-3,
        unit = "N.m.s/rad",
        min = 0.0,
        describe = "Viscous friction of the drive sprocket's bearing"
    )]
    pub gamma_ds: f64,
    #[parameter(
        start = 1e-2,
        unit = "N.m.s/rad",
        min = 0.0,
        describe = "Viscous friction of the wheel bearing (reacts on the swing arm)"
    )]
    pub gamma_rw: f64,
}

#[derive(Debug, Clone, Copy)]
pub struct Inputs<S = f64> {
    pub tau_eng: S,
    pub tau_load: S,
    pub c_brake: S,
}

/// The run lengths at which each run goes taut.
#[derive(Debug, Clone, Copy)]
pub struct Rest<S = f64> {
    pub l_u0: S,
    pub l_l0: S,
}

/// Everything at one instant: positions and speeds as the outputs show them (algebraic ones
/// solved), accelerations, tensions, extensions, energy terms, event indicators.
#[derive(Debug, Clone, Copy)]
pub struct Motion<S = f64> {
    pub q: V3<S>,
    pub speeds: V3<S>,
    pub dw: V3<S>,
    pub t_u: S,
    pub t_l: S,
    pub e_u: S,
    pub e_l: S,
    pub energy_chain: S,
    pub power_dissipated: S,
    pub indicators: [S; 2],
}

/// The outputs that follow from a motion: the absolute wheel, the chain's torques, the
/// energies.
#[derive(Debug, Clone, Copy)]
pub struct Outputs<S = f64> {
    pub theta_wheel: S,
    pub w_wheel: S,
    pub tau_chain_ds: S,
    pub tau_chain_rw: S,
    pub tau_chain_sa: S,
    pub energy_kinetic: S,
    pub energy_gravity: S,
    pub energy_suspension: S,
}

/// Where the half-bike starts: its coordinates, speeds and the runs' rest lengths.
#[derive(Debug, Clone, Copy)]
pub struct Start<S = f64> {
    pub q: V3<S>,
    pub w: V3<S>,
    pub rest: Rest<S>,
}

/// What the QSS swing arm balances: the gravity moment's amplitude, the wheel's drag on the
/// arm and the runs' tensions.
#[derive(Debug, Clone, Copy)]
pub struct ArmLoad<S = f64> {
    g_sa: S,
    drag: S,
    t_u: S,
    t_l: S,
}

impl ArmLoad<Dual> {
    /// The load's values, without their derivatives.
    pub fn value(&self) -> ArmLoad {
        ArmLoad {
            g_sa: self.g_sa.re,
            drag: self.drag.re,
            t_u: self.t_u.re,
            t_l: self.t_l.re,
        }
    }
}

/// A mode change at an event: the new mode, positions and speeds, and the energy an impact
/// lost (None: no impact).
#[derive(Debug, Clone, Copy)]
pub struct Switch {
    pub mode: i32,
    pub q: V3,
    pub w: V3,
    pub impact: Option<f64>,
}

/// Whether a run's indicator `z` (with rate `dz` and acceleration `ddz`) is positive or about
/// to be: an indicator at zero is decided by where it is heading, so a segment never starts
/// with an indicator at zero in the wrong mode (a root finder sees no sign change from 0).
/// `scale` bounds the rounding of `dz`.
fn heading_positive(z: f64, dz: f64, ddz: f64, scale: f64) -> bool {
    let tiny = 1e-12 * scale;
    z > 0.0 || z == 0.0 && (dz > tiny || dz.abs() <= tiny && ddz > 0.0)
}

/// The half-bike's parameters in the number type of the equations: `f64` for the simulation,
/// [`Dual`] for its exact derivatives.
#[derive(Debug, Clone, Copy)]
pub struct Bike<S> {
    pub j_ds: S,
    pub j_sa: S,
    pub j_rw: S,
    pub m_sa: S,
    pub m_rw: S,
    pub frame: Frame<S>,
    pub k: S,
    pub c: S,
    pub slack: S,
    pub g: S,
    pub k_susp: S,
    pub c_susp: S,
    pub tau_preload: S,
    pub theta_sa_ref: S,
    pub gamma_ds: S,
    pub gamma_rw: S,
}

impl HalfBike {
    #[inline(always)]
    pub fn bike(&self) -> Bike<f64> {
        Bike {
            j_ds: self.j_ds,
            j_sa: self.j_sa,
            j_rw: self.j_rw,
            m_sa: self.m_sa,
            m_rw: self.m_rw,
            frame: self.layout.frame(),
            k: self.k,
            c: self.c,
            slack: self.slack,
            g: self.g,
            k_susp: self.k_susp,
            c_susp: self.c_susp,
            tau_preload: self.tau_preload,
            theta_sa_ref: self.theta_sa_ref,
            gamma_ds: self.gamma_ds,
            gamma_rw: self.gamma_rw,
        }
    }

    /// The parameters moving as `seed`'s fields say.
    pub fn along(&self, seed: &HalfBike) -> Bike<Dual> {
        let dual = Dual::seeded;
        Bike {
            j_ds: dual(self.j_ds, seed.j_ds),
            j_sa: dual(self.j_sa, seed.j_sa),
            j_rw: dual(self.j_rw, seed.j_rw),
            m_sa: dual(self.m_sa, seed.m_sa),
            m_rw: dual(self.m_rw, seed.m_rw),
            frame: self.layout.along(&seed.layout),
            k: dual(self.k, seed.k),
            c: dual(self.c, seed.c),
            slack: dual(self.slack, seed.slack),
            g: dual(self.g, seed.g),
            k_susp: dual(self.k_susp, seed.k_susp),
            c_susp: dual(self.c_susp, seed.c_susp),
            tau_preload: dual(self.tau_preload, seed.tau_preload),
            theta_sa_ref: dual(self.theta_sa_ref, seed.theta_sa_ref),
            gamma_ds: dual(self.gamma_ds, seed.gamma_ds),
            gamma_rw: dual(self.gamma_rw, seed.gamma_rw),
        }
    }

    pub fn check(&self) -> Result<(), Invalid> {
        let l = self.layout;
        for (name, x) in [
            ("J_ds", self.j_ds),
            ("J_rw", self.j_rw),
            ("l_sa", l.l_sa),
            ("r_ds", l.r_ds),
            ("r_ws", l.r_ws),
            ("k_chain", self.k),
            ("slack", self.slack),
            ("k_susp", self.k_susp),
        ] {
            if !(x.is_finite() && x > 0.0) {
                return Err(Invalid::new(name, x, "must be positive"));
            }
        }
        for (name, x) in [
            ("J_sa", self.j_sa),
            ("m_sa", self.m_sa),
            ("m_rw", self.m_rw),
            ("c_chain", self.c),
            ("g", self.g),
            ("c_susp", self.c_susp),
            ("gamma_ds", self.gamma_ds),
            ("gamma_rw", self.gamma_rw),
        ] {
            if !(x.is_finite() && x >= 0.0) {
                return Err(Invalid::new(name, x, "must be >= 0"));
            }
        }
        for (name, x) in [
            ("d_sa", l.d_sa),
            ("ds_x", l.ds_x),
            ("ds_z", l.ds_z),
            ("tau_preload", self.tau_preload),
            ("theta_sa_ref", self.theta_sa_ref),
        ] {
            if !x.is_finite() {
                return Err(Invalid::new(name, x, "must be a finite number"));
            }
        }
        if self.bike().i_sa() <= 0.0 {
            return Err(Invalid::new(
                "J_sa",
                self.j_sa,
                "the swing arm needs an inertia about its pivot (J_sa, m_sa or m_rw > 0)",
            ));
        }
        Ok(())
    }
}

// Every equation is inlined into the model's f64 functions: the copy of the parameters that
// `HalfBike::bike` makes then dissolves into reads in place, so a step costs no more.
impl<S: Scalar> Bike<S> {
    /// Inertia of swing arm and wheel mass about the pivot.
    #[inline(always)]
    pub fn i_sa(&self) -> S {
        let f = &self.frame;
        self.j_sa + self.m_sa * f.d_sa * f.d_sa + self.m_rw * f.l_sa.powi(2)
    }

    /// Gravity moment amplitude: the potential is `G_sa sin(th_sa)` (z up).
    #[inline(always)]
    pub fn g_sa(&self) -> S {
        self.g * (self.m_sa * self.frame.d_sa + self.m_rw * self.frame.l_sa)
    }

    /// The start: the swing arm at `th_sa`, at rest relative to the wheel turning at `w_rw`,
    /// the sprocket turning with it through the chain; the upper run just taut, the slack all
    /// in the lower run.
    #[inline(always)]
    pub fn start(&self, th_sa: S, w_rw: S) -> Start<S> {
        let zero = S::constant(0.0);
        let rho = self.frame.r_ws / self.frame.r_ds;
        let q = [zero, th_sa, zero];
        let (l_u, l_l) = self.lengths(q);
        Start {
            q,
            w: [rho * w_rw, zero, w_rw],
            rest: Rest {
                l_u0: l_u,
                l_l0: l_l + self.slack,
            },
        }
    }

    /// `M^-1 v`: the ds row alone; rows sa and rw give `I_sa a_sa = v_sa - v_rw`.
    #[inline(always)]
    fn m_inv(&self, v: V3<S>) -> V3<S> {
        let a_sa = (v[1] - v[2]) / self.i_sa();
        [v[0] / self.j_ds, a_sa, v[2] / self.j_rw - a_sa]
    }

    #[inline(always)]
    pub fn kinetic(&self, w: V3<S>) -> S {
        (self.j_ds * w[0] * w[0] + self.i_sa() * w[1] * w[1] + self.j_rw * (w[1] + w[2]).powi(2))
            * 0.5
    }

    /// Run lengths between material marks.
    #[inline(always)]
    pub fn lengths(&self, q: V3<S>) -> (S, S) {
        self.lengths_at(&self.frame.runs(q[1]), q)
    }

    #[inline(always)]
    fn lengths_at(&self, r: &Runs<S>, q: V3<S>) -> (S, S) {
        let (r_ds, r_ws) = (self.frame.r_ds, self.frame.r_ws);
        let wheel = r_ws * (q[1] + q[2]);
        (
            r.g_u[0] - wheel + r_ds * q[0],
            r.g_l[0] + wheel - r_ds * q[0],
        )
    }

    /// `grad L_u`, `grad L_l`.
    #[inline(always)]
    fn gradients(&self, r: &Runs<S>) -> (V3<S>, V3<S>) {
        let (r_ds, r_ws) = (self.frame.r_ds, self.frame.r_ws);
        (
            [r_ds, r.g_u[1] - r_ws, -r_ws],
            [-r_ds, r.g_l[1] + r_ws, r_ws],
        )
    }

    /// Generalized forces other than the chain's, and the power they dissipate.
    #[inline(always)]
    fn applied(&self, q: V3<S>, w: V3<S>, u: Inputs<S>) -> (V3<S>, S) {
        let dth = q[1] - self.theta_sa_ref;
        let suspension = self.tau_preload - self.k_susp * dth - self.c_susp * w[1];
        let wheel_drag = u.c_brake + self.gamma_rw;
        (
            [
                u.tau_eng - self.gamma_ds * w[0],
                suspension - self.g_sa() * q[1].cos() + u.tau_load,
                u.tau_load - wheel_drag * w[2],
            ],
            self.gamma_ds * w[0] * w[0] + self.c_susp * w[1] * w[1] + wheel_drag * w[2] * w[2],
        )
    }

    /// Each run's extension and its rate, and the runs' gradients `A = dL/dq`.
    #[allow(clippy::type_complexity)]
    #[inline(always)]
    fn stretch(
        &self,
        r: &Runs<S>,
        q: V3<S>,
        w: V3<S>,
        rest: Rest<S>,
    ) -> ([S; 2], [S; 2], (V3<S>, V3<S>)) {
        let (l_u, l_l) = self.lengths_at(r, q);
        let (a_u, a_l) = self.gradients(r);
        (
            [l_u - rest.l_u0, l_l - rest.l_l0],
            [dot(a_u, w), dot(a_l, w)],
            (a_u, a_l),
        )
    }

    /// Full elastic chain: each run pulls with `k e + c de/dt` while taut (`mode`).
    #[inline(always)]
    pub fn full(&self, q: V3<S>, w: V3<S>, u: Inputs<S>, rest: Rest<S>, mode: i32) -> Motion<S> {
        let r = self.frame.runs(q[1]);
        let ([e_u, e_l], [de_u, de_l], (a_u, a_l)) = self.stretch(&r, q, w, rest);
        let zero = S::constant(0.0);
        let taut_u = mode == UPPER || mode == BOTH;
        let taut_l = mode == LOWER || mode == BOTH;
        let t_u = if taut_u {
            self.k * e_u + self.c * de_u
        } else {
            zero
        };
        let t_l = if taut_l {
            self.k * e_l + self.c * de_l
        } else {
            zero
        };
        let (f, mut power) = self.applied(q, w, u);
        let f = [0, 1, 2].map(|i| f[i] - t_u * a_u[i] - t_l * a_l[i]);
        // A taut run's damper takes c (de/dt)^2. A run stretched but not pulling because its
        // damper would push (k e + c de/dt <= 0, so de/dt < 0) relaxes through its damper: the
        // spring energy it gives up, -k e de/dt >= 0, is dissipated there, not passed to the
        // bodies. (A stretched run that would pull but is not yet taut is a crossing the step
        // has not located yet: nothing to book.)
        for (taut, e, de) in [(taut_u, e_u, de_u), (taut_l, e_l, de_l)] {
            power = power
                + if taut {
                    self.c * de * de
                } else if e.value() > 0.0 && (self.k * e + self.c * de).value() <= 0.0 {
                    -self.k * e * de
                } else {
                    zero
                };
        }
        let positive = |e: S| e.max(zero).powi(2);
        Motion {
            q,
            speeds: w,
            dw: self.m_inv(f),
            t_u,
            t_l,
            e_u,
            e_l,
            energy_chain: self.k * 0.5 * (positive(e_u) + positive(e_l)),
            power_dissipated: power,
            indicators: [
                self.taut_indicator(e_u, de_u),
                self.taut_indicator(e_l, de_l),
            ],
        }
    }

    /// Positive exactly while a run pulls: `e > 0` and `k e + c de/dt > 0`.
    #[inline(always)]
    fn taut_indicator(&self, e: S, de: S) -> S {
        e.min(e + self.c / self.k * de)
    }

    /// The wheel's acceleration in the QSS model and the signed tension `T_u - T_l` from the
    /// wheel's equation; `rho = r_ws/r_ds`.
    #[inline(always)]
    fn qss_wheel(&self, w_rw: S, u: Inputs<S>) -> (S, S, S) {
        let l = &self.frame;
        let rho = l.r_ws / l.r_ds;
        let (x, y) = self.qss_forces(w_rw, u);
        let a_rw = (x + rho * y) / (self.j_rw + rho * rho * self.j_ds);
        (rho, a_rw, (self.j_rw * a_rw - x) / l.r_ws)
    }

    /// Quasi-steady-state chain: the wheel is the state; the chain's extension and the swing
    /// arm follow it algebraically (`w_sa = 0`). The taut run is `mode`; `arm` gives the
    /// swing-arm angle that balances its load.
    #[inline(always)]
    pub fn qss(
        &self,
        q: V3<S>,
        w: V3<S>,
        u: Inputs<S>,
        rest: Rest<S>,
        mode: i32,
        arm: impl FnOnce(&Self, &ArmLoad<S>) -> S,
    ) -> Motion<S> {
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
        let th_sa = arm(self, &load);
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

    /// Inextensible chain: in a taut mode the run's length is held, `th_ds` follows from the
    /// other coordinates (its own state is not used) and the tension is the constraint force;
    /// slack (FREE): no chain force.
    #[inline(always)]
    pub fn inextensible(
        &self,
        q: V3<S>,
        w: V3<S>,
        u: Inputs<S>,
        rest: Rest<S>,
        mode: i32,
    ) -> Motion<S> {
        let zero = S::constant(0.0);
        let r = self.frame.runs(q[1]);
        let (a_u, a_l) = self.gradients(&r);
        if mode != UPPER && mode != LOWER {
            let (l_u, l_l) = self.lengths_at(&r, q);
            let (f, power) = self.applied(q, w, u);
            return Motion {
                q,
                speeds: w,
                dw: self.m_inv(f),
                t_u: zero,
                t_l: zero,
                e_u: l_u - rest.l_u0,
                e_l: l_l - rest.l_l0,
                energy_chain: zero,
                power_dissipated: power,
                indicators: [l_u - rest.l_u0, l_l - rest.l_l0],
            };
        }
        let (qq, ww) = self.on_constraint(&r, q, w, rest, mode);
        let (a, g2) = if mode == UPPER {
            (a_u, r.g_u[2])
        } else {
            (a_l, r.g_l[2])
        };
        let (f, power) = self.applied(qq, ww, u);
        let m_a = self.m_inv(a);
        // A a_q + G'' w_sa^2 = 0 with M a_q = f - lambda A^T.
        let lambda = (dot(a, self.m_inv(f)) + g2 * ww[1] * ww[1]) / dot(a, m_a);
        let dw = [0, 1, 2].map(|i| self.m_inv(f)[i] - lambda * m_a[i]);
        let (l_u, l_l) = self.lengths_at(&r, qq);
        let (e_u, e_l) = (l_u - rest.l_u0, l_l - rest.l_l0);
        let (t_u, t_l, other) = if mode == UPPER {
            (lambda, zero, e_l)
        } else {
            (zero, lambda, e_u)
        };
        Motion {
            q: qq,
            speeds: ww,
            dw,
            t_u,
            t_l,
            e_u,
            e_l,
            energy_chain: zero,
            power_dissipated: power,
            indicators: [lambda, other],
        }
    }

    /// Positions and speeds with `th_ds` and `w_ds` from the taut run's constraint
    /// (`L` is linear in `th_ds`, with slope `+r_ds` upper and `-r_ds` lower).
    #[inline(always)]
    fn on_constraint(
        &self,
        r: &Runs<S>,
        q: V3<S>,
        w: V3<S>,
        rest: Rest<S>,
        mode: i32,
    ) -> (V3<S>, V3<S>) {
        let l = &self.frame;
        let wheel = l.r_ws * (q[1] + q[2]);
        let (th_ds, w_ds) = if mode == UPPER {
            (
                (rest.l_u0 - r.g_u[0] + wheel) / l.r_ds,
                ((l.r_ws - r.g_u[1]) * w[1] + l.r_ws * w[2]) / l.r_ds,
            )
        } else {
            (
                (r.g_l[0] + wheel - rest.l_l0) / l.r_ds,
                ((r.g_l[1] + l.r_ws) * w[1] + l.r_ws * w[2]) / l.r_ds,
            )
        };
        ([th_ds, q[1], q[2]], [w_ds, w[1], w[2]])
    }

    /// The outputs that follow from the motion `m`; `g_sa` is the gravity moment's amplitude.
    #[inline(always)]
    pub fn outputs(&self, m: &Motion<S>, g_sa: S) -> Outputs<S> {
        let (q, w) = (m.q, m.speeds);
        let (r_ds, r_ws) = (self.frame.r_ds, self.frame.r_ws);
        let runs = self.frame.runs(q[1]);
        let dth = q[1] - self.theta_sa_ref;
        Outputs {
            theta_wheel: q[1] + q[2],
            w_wheel: w[1] + w[2],
            tau_chain_ds: r_ds * (m.t_l - m.t_u),
            tau_chain_rw: r_ws * (m.t_u - m.t_l),
            tau_chain_sa: -m.t_u * (runs.g_u[1] - r_ws) - m.t_l * (runs.g_l[1] + r_ws),
            energy_kinetic: self.kinetic(w),
            energy_gravity: g_sa * (q[1].sin() - self.theta_sa_ref.sin()),
            energy_suspension: -self.tau_preload * dth + self.k_susp * 0.5 * dth * dth,
        }
    }
}

impl Bike<f64> {
    /// The rate at which chain damping alone would relax a taut run (1/s): `c A M^-1 A^T`.
    #[inline(always)]
    pub fn chain_rate(&self, th_sa: f64) -> f64 {
        let (a_u, _) = self.gradients(&self.frame.runs(th_sa));
        self.c * dot(a_u, self.m_inv(a_u))
    }

    /// A speed scale for the rounding of a run's rate.
    #[inline(always)]
    fn speed_scale(&self, r: &Runs, w: V3) -> f64 {
        let l = self.frame;
        l.r_ds * w[0].abs()
            + r.g_u[1].abs().max(r.g_l[1].abs()) * w[1].abs()
            + l.r_ws * (w[1].abs() + w[2].abs())
            + f64::MIN_POSITIVE
    }

    /// The full model's event indicators, as [`Self::full`] reports them, without its
    /// dynamics: the indicators are evaluated more often than the derivatives.
    #[inline(always)]
    pub fn full_indicators(&self, q: V3, w: V3, rest: Rest) -> [f64; 2] {
        let ([e_u, e_l], [de_u, de_l], _) = self.stretch(&self.frame.runs(q[1]), q, w, rest);
        [
            self.taut_indicator(e_u, de_u),
            self.taut_indicator(e_l, de_l),
        ]
    }

    /// Full model: which runs are taut now.
    #[inline(always)]
    pub fn full_switch(&self, q: V3, w: V3, u: Inputs, rest: Rest, mode: i32) -> Option<Switch> {
        let r = self.frame.runs(q[1]);
        let scale = self.speed_scale(&r, w);
        // Rates of the indicators: the accelerations only matter when a run sits at zero at
        // rest, where the chain force is zero whatever the mode.
        let free = self.full(q, w, u, rest, FREE);
        let m = self.full(q, w, u, rest, mode);
        let (a_u, a_l) = self.gradients(&r);
        let curv = |g2: f64| g2 * w[1] * w[1];
        let taut_u = heading_positive(
            m.indicators[0],
            dot(a_u, w),
            dot(a_u, free.dw) + curv(r.g_u[2]),
            scale,
        );
        let taut_l = heading_positive(
            m.indicators[1],
            dot(a_l, w),
            dot(a_l, free.dw) + curv(r.g_l[2]),
            scale,
        );
        let new = match (taut_u, taut_l) {
            (true, true) => BOTH,
            (true, false) => UPPER,
            (false, true) => LOWER,
            (false, false) => FREE,
        };
        (new != mode).then_some(Switch {
            mode: new,
            q,
            w,
            impact: None,
        })
    }

    /// The QSS swing-arm angle at which its balance `h` ([`Self::arm_balance`]) is 0, by
    /// Newton from `guess`.
    #[inline(always)]
    pub fn qss_arm(&self, load: &ArmLoad, guess: f64) -> f64 {
        let mut th = if guess.is_finite() {
            guess
        } else {
            self.theta_sa_ref
        };
        for _ in 0..50 {
            let (h, dh) = self.arm_balance(th, load);
            let step = h / dh;
            th -= step;
            // A NaN step ends the iteration too.
            if step.is_nan() || step.abs() <= 1e-15 * (1.0 + th.abs()) {
                break;
            }
        }
        th
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

    /// Inextensible chain: a taut run goes slack when its tension would turn negative; a slack
    /// run going taut is a plastic impact, `w+ = w - M^-1 A^T (A w)/(A M^-1 A^T)`, which keeps
    /// the generalized momentum along every motion the run allows and loses
    /// `(A w)^2 / (2 A M^-1 A^T)`. Both runs taut at once means the slack is too small.
    #[inline(always)]
    pub fn inextensible_switch(
        &self,
        q: V3,
        w: V3,
        u: Inputs,
        rest: Rest,
        mode: i32,
    ) -> Result<Option<Switch>, Invalid> {
        let r = self.frame.runs(q[1]);
        let scale = self.speed_scale(&r, w);
        let (a_u, a_l) = self.gradients(&r);
        if mode == UPPER || mode == LOWER {
            let m = self.inextensible(q, w, u, rest, mode);
            let lambda = m.indicators[0];
            if lambda < 0.0 {
                return Ok(Some(Switch {
                    mode: FREE,
                    q: m.q,
                    w: m.speeds,
                    impact: None,
                }));
            }
            let (other, a) = if mode == UPPER {
                (m.e_l, a_l)
            } else {
                (m.e_u, a_u)
            };
            if heading_positive(other, dot(a, m.speeds), 0.0, scale) {
                return Err(Invalid::new(
                    "slack",
                    self.slack,
                    format!(
                        "both runs are taut at theta_sa = {}: the swing arm's travel takes up more than the slack",
                        q[1]
                    ),
                ));
            }
            return Ok(None);
        }
        let free = self.inextensible(q, w, u, rest, FREE);
        for (run, e, a, g2) in [
            (UPPER, free.e_u, a_u, r.g_u[2]),
            (LOWER, free.e_l, a_l, r.g_l[2]),
        ] {
            let de = dot(a, w);
            let dde = dot(a, free.dw) + g2 * w[1] * w[1];
            // Taut again only while closing: a run a hair past zero but opening stays slack.
            if !(e >= 0.0 && heading_positive(0.0, de, dde, scale)) {
                continue;
            }
            let m_a = self.m_inv(a);
            let p = dot(a, m_a);
            let closing = de.max(0.0);
            let w_plus = [0, 1, 2].map(|i| w[i] - m_a[i] * closing / p);
            let (q_plus, w_plus) = self.on_constraint(&r, q, w_plus, rest, run);
            return Ok(Some(Switch {
                mode: run,
                q: q_plus,
                w: w_plus,
                impact: (closing > 0.0).then(|| 0.5 * closing * closing / p),
            }));
        }
        Ok(None)
    }
}

impl Bike<Dual> {
    /// The QSS swing-arm angle `th` (Newton's, in f64) moving with the knowns: its balance
    /// `h(th, knowns) = 0` keeps holding, so `dth = -h_knowns / h_th` (the implicit function
    /// theorem; `h` in dual numbers with `th` held gives `h_knowns`).
    pub fn arm_moving(&self, th: f64, load: &ArmLoad<Dual>) -> Dual {
        let (h, dh) = self.arm_balance(Dual::constant(th), load);
        Dual::seeded(th, -h.eps / dh.re)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The full model's indicator of each run is min(e, e + c/k de/dt), from the run lengths
    /// and their gradients; `full_indicators` gives what `full` reports in every mode.
    #[test]
    fn each_run_pulls_exactly_while_its_indicator_is_positive() {
        let bike = HalfBike::default().bike();
        let q = [0.3, 0.05, 0.7];
        let r = bike.frame.runs(q[1]);
        let (a_u, a_l) = bike.gradients(&r);
        let (l_u, l_l) = bike.lengths(q);
        // The upper run stretched by 1 mm, the lower one slack by 2 mm.
        let rest = Rest {
            l_u0: l_u - 1e-3,
            l_l0: l_l + 2e-3,
        };
        let u = Inputs {
            tau_eng: 5.0,
            tau_load: -3.0,
            c_brake: 0.1,
        };
        for w in [[40.0, 0.5, 20.0], [-30.0, -2.0, 10.0]] {
            let expected = [(1e-3, dot(a_u, w)), (-2e-3, dot(a_l, w))]
                .map(|(e, de): (f64, f64)| e.min(e + bike.c / bike.k * de));
            let alone = bike.full_indicators(q, w, rest);
            for (got, want) in alone.iter().zip(expected) {
                assert!((got - want).abs() < 1e-12, "{got} m, expected {want} m");
            }
            for mode in [FREE, UPPER, LOWER, BOTH] {
                assert_eq!(
                    bike.full(q, w, u, rest, mode).indicators,
                    alone,
                    "mode {mode}"
                );
            }
        }
    }

    /// A slack run that reaches its rest length while moving along itself (zero rate) goes
    /// taut only if its extension is accelerating. The acceleration is set with the engine
    /// torque and checked by finite differences of the run's length along the free motion
    /// `q + w t + dw t^2 / 2`; the swing arm turns at 3 rad/s, so the centripetal part
    /// `G'' w_sa^2` of that acceleration counts nine times its coefficient.
    #[test]
    fn a_grazing_run_goes_taut_only_if_its_extension_accelerates() {
        let bike = HalfBike::default().bike();
        let q = [0.3, 0.05, 0.7];
        let r = bike.frame.runs(q[1]);
        let (a_u, _) = bike.gradients(&r);
        let (l_u, l_l) = bike.lengths(q);
        // The upper run exactly at its rest length, the lower one slack.
        let rest = Rest {
            l_u0: l_u,
            l_l0: l_l + 0.01,
        };
        let (w_sa, w_rw) = (3.0, 20.0);
        // The sprocket speed that holds the upper run's rate at zero.
        let w = [-(a_u[1] * w_sa + a_u[2] * w_rw) / a_u[0], w_sa, w_rw];
        let idle = Inputs {
            tau_eng: 0.0,
            tau_load: 0.0,
            c_brake: 0.0,
        };
        let base = dot(a_u, bike.inextensible(q, w, idle, rest, FREE).dw);
        let centripetal = r.g_u[2] * w_sa * w_sa;
        for sign in [1.0, -1.0] {
            let wanted = sign * 0.5 * centripetal.abs();
            // Only the sprocket's row of M^-1 f holds tau_eng: slope r_ds / J_ds.
            let tau_eng = (wanted - centripetal - base) * bike.j_ds / bike.frame.r_ds;
            let u = Inputs { tau_eng, ..idle };
            let dw = bike.inextensible(q, w, u, rest, FREE).dw;
            let extension = |t: f64| {
                let at = [0, 1, 2].map(|i| q[i] + w[i] * t + 0.5 * dw[i] * t * t);
                bike.lengths(at).0 - rest.l_u0
            };
            let rate = (extension(1e-6) - extension(-1e-6)) / 2e-6;
            let h = 1e-3;
            let acceleration = (extension(h) - 2.0 * extension(0.0) + extension(-h)) / (h * h);
            assert!(rate.abs() < 1e-8, "the run's rate {rate} m/s");
            assert!(
                (acceleration - wanted).abs() < 1e-3 * wanted.abs(),
                "the run's acceleration {acceleration} m/s2, set to {wanted}"
            );
            let switch = bike.inextensible_switch(q, w, u, rest, FREE).unwrap();
            assert_eq!(
                switch.map(|s| s.mode),
                (sign > 0.0).then_some(UPPER),
                "extension accelerating at {acceleration} m/s2"
            );
        }
    }
}
