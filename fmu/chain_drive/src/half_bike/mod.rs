//! The half-bike's equations of motion under the three chain models.
//!
//! Coordinates `q = (th_ds, th_sa, th_rw)`, `th_rw` relative to the swing arm; speeds `w`.
//! Mass matrix `M = [[J_ds, 0, 0], [0, I_sa + J_rw, J_rw], [0, J_rw, J_rw]]`, constant, so there
//! are no velocity terms. Generalized forces other than the chain's:
//! `u_ds = tau_eng - gamma_ds w_ds`,
//! `u_sa = tau_preload - k_susp (th_sa - th_ref) - c_susp w_sa - G_sa cos(th_sa) + tau_load`,
//! `u_rw = tau_load - (c_brake + gamma_rw) w_rw`.
//! A run of tension `T` adds `-T grad L` (its length `L` from [`crate::geometry`]).
//!
//! Here: the parameters, the mass matrix, the run lengths and the forces every chain model
//! shares, and the outputs that follow from a motion; each chain model's motion, events and
//! mode changes in its own module (`full`, `qss`, `inextensible`).

use crate::geometry::{Frame, Layout, Runs};
use fmu_runtime::{Invalid, Param, Scalar, Variables};

mod full;
mod inextensible;
mod qss;

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
/// documentation. Generic over the number type of the model (`fmu_runtime::lift`).
#[derive(Debug, Clone, Copy, PartialEq, Variables)]
pub struct HalfBike<S: Scalar = f64> {
    #[parameter(
        name = "J_ds",
        start = 0.005,
        unit = "kg.m2",
        min = 0.0,
        describe = "Inertia of the drive sprocket and what turns with it (> 0)"
    )]
    pub j_ds: Param<S>,
    #[parameter(
        name = "J_sa",
        start = 0.4,
        unit = "kg.m2",
        min = 0.0,
        describe = "Inertia of the swing arm about its centre of mass"
    )]
    pub j_sa: Param<S>,
    #[parameter(
        name = "J_rw",
        start = 0.7,
        unit = "kg.m2",
        min = 0.0,
        describe = "Inertia of the rear wheel with its sprocket about the axle (> 0)"
    )]
    pub j_rw: Param<S>,
    #[parameter(
        start = 7.0,
        unit = "kg",
        min = 0.0,
        describe = "Mass of the swing arm"
    )]
    pub m_sa: Param<S>,
    #[parameter(
        start = 15.0,
        unit = "kg",
        min = 0.0,
        describe = "Mass of the rear wheel"
    )]
    pub m_rw: Param<S>,
    #[variables]
    pub layout: Layout<S>,
    #[parameter(
        name = "k_chain",
        start = 1e5,
        unit = "N/m",
        min = 0.0,
        describe = "Stiffness of each chain run (> 0; full and QSS models)"
    )]
    pub k: Param<S>,
    #[parameter(
        name = "c_chain",
        unit = "N.s/m",
        min = 0.0,
        describe = "Damping of each chain run while taut (full model)"
    )]
    pub c: Param<S>,
    #[parameter(
        start = 0.002,
        unit = "m",
        min = 0.0,
        describe = "Chain length beyond the taut geometry at the start (> 0), all of it in the lower run"
    )]
    pub slack: Param<S>,
    #[parameter(start = 9.81, unit = "m/s2", min = 0.0, describe = "Gravity (0: off)")]
    pub g: Param<S>,
    #[parameter(
        start = 1e4,
        unit = "N.m/rad",
        min = 0.0,
        describe = "Suspension rate about the pivot (> 0)"
    )]
    pub k_susp: Param<S>,
    #[parameter(
        start = 200.0,
        unit = "N.m.s/rad",
        min = 0.0,
        describe = "Suspension damping about the pivot"
    )]
    pub c_susp: Param<S>,
    // The weight of arm and wheel about the pivot: theta_sa_ref is then the rest position.
    #[parameter(start = 9.81 * (7.0 * 0.35 + 15.0 * 0.7), unit = "N.m", describe = "Suspension torque at theta_sa_ref, pushing the wheel down (default: the weight of arm and wheel at g = 9.81)")]
    pub tau_preload: Param<S>,
    #[parameter(
        unit = "rad",
        describe = "Swing-arm angle where the suspension torque is tau_preload"
    )]
    pub theta_sa_ref: Param<S>,
    #[parameter(
        start = 1e-3,
        unit = "N.m.s/rad",
        min = 0.0,
        describe = "Viscous friction of the drive sprocket's bearing"
    )]
    pub gamma_ds: Param<S>,
    #[parameter(
        start = 1e-2,
        unit = "N.m.s/rad",
        min = 0.0,
        describe = "Viscous friction of the wheel bearing (reacts on the swing arm)"
    )]
    pub gamma_rw: Param<S>,
}

#[derive(Debug, Clone, Copy)]
pub struct Inputs<S: Scalar = f64> {
    pub tau_eng: S,
    pub tau_load: S,
    pub c_brake: S,
}

/// The run lengths at which each run goes taut.
#[derive(Debug, Clone, Copy)]
pub struct Rest<S: Scalar = f64> {
    pub l_u0: Param<S>,
    pub l_l0: Param<S>,
}

/// Everything at one instant: positions and speeds as the outputs show them (algebraic ones
/// solved), accelerations, tensions, extensions, energy terms, event indicators.
#[derive(Debug, Clone, Copy)]
pub struct Motion<S: Scalar = f64> {
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
pub struct Outputs<S: Scalar = f64> {
    pub theta_wheel: S,
    pub w_wheel: S,
    pub tau_chain_ds: S,
    pub tau_chain_rw: S,
    pub tau_chain_sa: S,
    pub energy_kinetic: S,
    pub energy_gravity: S,
    pub energy_suspension: S,
}

/// Where the half-bike starts: its coordinates, speeds and the runs' rest lengths (computed
/// from parameters alone, over their number type: [`Bike::params`]).
#[derive(Debug, Clone, Copy)]
pub struct Start<S: Scalar = f64> {
    pub q: V3<S>,
    pub w: V3<S>,
    pub l_u0: S,
    pub l_l0: S,
}

/// What the QSS swing arm balances: the gravity moment's amplitude, the wheel's drag on the
/// arm and the runs' tensions.
#[derive(Debug, Clone, Copy)]
pub struct ArmLoad<S: Scalar = f64> {
    g_sa: Param<S>,
    drag: S,
    t_u: S,
    t_l: S,
}

impl<S: Scalar> ArmLoad<S> {
    /// The load's values, without their derivatives.
    #[inline(always)]
    pub fn value(&self) -> ArmLoad {
        ArmLoad {
            g_sa: self.g_sa.value(),
            drag: self.drag.value(),
            t_u: self.t_u.value(),
            t_l: self.t_l.value(),
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

/// The half-bike's parameters as the equations read them, the layout's as a [`Frame`].
#[derive(Debug, Clone, Copy)]
pub struct Bike<S: Scalar> {
    pub j_ds: Param<S>,
    pub j_sa: Param<S>,
    pub j_rw: Param<S>,
    pub m_sa: Param<S>,
    pub m_rw: Param<S>,
    pub frame: Frame<S>,
    pub k: Param<S>,
    pub c: Param<S>,
    pub slack: Param<S>,
    pub g: Param<S>,
    pub k_susp: Param<S>,
    pub c_susp: Param<S>,
    pub tau_preload: Param<S>,
    pub theta_sa_ref: Param<S>,
    pub gamma_ds: Param<S>,
    pub gamma_rw: Param<S>,
}

impl<S: Scalar> HalfBike<S> {
    #[inline(always)]
    pub fn bike(&self) -> Bike<S> {
        self.bike_over()
    }

    /// The parameters as the equations over `T` read them: `T = S`, or the parameters' own
    /// number type (`Param<S>`: the start, computed from parameters alone).
    #[inline(always)]
    pub fn bike_over<T: Scalar<P = Param<S>>>(&self) -> Bike<T> {
        Bike {
            j_ds: self.j_ds,
            j_sa: self.j_sa,
            j_rw: self.j_rw,
            m_sa: self.m_sa,
            m_rw: self.m_rw,
            frame: self.layout.frame_over(),
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
}

impl HalfBike {
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
    pub fn i_sa(&self) -> Param<S> {
        let f = &self.frame;
        self.j_sa + self.m_sa * f.d_sa * f.d_sa + self.m_rw * f.l_sa.powi(2)
    }

    /// Gravity moment amplitude: the potential is `G_sa sin(th_sa)` (z up).
    #[inline(always)]
    pub fn g_sa(&self) -> Param<S> {
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
            l_u0: l_u,
            l_l0: l_l + self.slack,
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
        let (r_ds, r_ws) = (S::param(self.frame.r_ds), S::param(self.frame.r_ws));
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

    /// The outputs that follow from the motion `m`; `g_sa` is the gravity moment's amplitude.
    #[inline(always)]
    pub fn outputs(&self, m: &Motion<S>, g_sa: Param<S>) -> Outputs<S> {
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

    /// The parameters' values, without their derivatives.
    #[inline(always)]
    pub fn value(&self) -> Bike<f64> {
        Bike {
            j_ds: self.j_ds.value(),
            j_sa: self.j_sa.value(),
            j_rw: self.j_rw.value(),
            m_sa: self.m_sa.value(),
            m_rw: self.m_rw.value(),
            frame: self.frame.value(),
            k: self.k.value(),
            c: self.c.value(),
            slack: self.slack.value(),
            g: self.g.value(),
            k_susp: self.k_susp.value(),
            c_susp: self.c_susp.value(),
            tau_preload: self.tau_preload.value(),
            theta_sa_ref: self.theta_sa_ref.value(),
            gamma_ds: self.gamma_ds.value(),
            gamma_rw: self.gamma_rw.value(),
        }
    }
}

impl Bike<f64> {
    /// A speed scale for the rounding of a run's rate.
    #[inline(always)]
    fn speed_scale(&self, r: &Runs, w: V3) -> f64 {
        let l = self.frame;
        l.r_ds * w[0].abs()
            + r.g_u[1].abs().max(r.g_l[1].abs()) * w[1].abs()
            + l.r_ws * (w[1].abs() + w[2].abs())
            + f64::MIN_POSITIVE
    }
}
