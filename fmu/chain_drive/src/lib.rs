//! ChainDrive: the thesis's planar half-bike (drive sprocket on the fixed centre assembly, swing
//! arm on its pivot with a suspension, rear wheel with its sprocket) joined by a chain whose runs
//! pull but never push, with three chain models selected by `chain_model`:
//! 1 full elastic, 2 quasi-steady-state (QSS), 3 inextensible with a slack mode and impacts.
//!
//! Equations and derivation: `documentation.html` next to this file (it ships in the FMU).

pub mod geometry;
mod half_bike;

use fmu_runtime::declare::concat_names;
use fmu_runtime::{
    export_fmu, Dual, Experiment, Indicators, Invalid, Model, Scalar, Side, Variables, HYSTERESIS,
};
use half_bike::{ArmLoad, Bike, Inputs, Motion, Rest};
pub use half_bike::{HalfBike, BOTH, FREE, LOWER, UPPER};

pub const FULL: i32 = 1;
pub const QSS: i32 = 2;
pub const INEXTENSIBLE: i32 = 3;

/// A decay rate above which the full model is integrated with BDF (1/s).
const STIFF_RATE: f64 = 1e5;

#[derive(Debug, Clone, Variables)]
pub struct ChainDrive {
    #[variables]
    bike: HalfBike,
    #[parameter(start = FULL, min = 1.0, max = 3.0, describe = "1 full elastic, 2 quasi-steady-state, 3 inextensible")]
    chain_model: i32,
    #[parameter(unit = "rad", describe = "Initial swing-arm angle")]
    theta_sa_start: f64,
    #[parameter(
        unit = "rad/s",
        describe = "Initial wheel speed (the drive sprocket starts at r_ws/r_ds times it)"
    )]
    w_rw_start: f64,
    #[input(
        unit = "N.m",
        describe = "Engine torque on the drive sprocket (positive drives the bike forward and tightens the upper run)"
    )]
    tau_eng: f64,
    #[input(
        unit = "N.m",
        describe = "Road torque on the rear wheel, positive forward (a resistance is negative); reacts on the ground"
    )]
    tau_load: f64,
    #[input(
        unit = "N.m.s/rad",
        min = 0.0,
        describe = "Brake coefficient (>= 0): brake torque -c_brake w_rw on the wheel, reacting on the swing arm"
    )]
    c_brake: f64,
    #[output(
        name = "theta_ds",
        index = 0,
        depends_on = THETA_DS,
        initial_depends_on = &INITIAL_RUNS,
        unit = "rad",
        state,
        angle,
        derivative = "w_ds",
        describe = "Drive sprocket angle, positive forward (state; algebraic in the QSS model)"
    )]
    #[output(
        name = "theta_sa",
        index = 1,
        depends_on = THETA_SA,
        initial_depends_on = &INITIAL_POSE,
        unit = "rad",
        state,
        derivative = "w_sa",
        describe = "Swing-arm angle, positive wheel up (state; algebraic in the QSS model)"
    )]
    #[output(
        name = "theta_rw",
        index = 2,
        depends_on = ["theta_rw"],
        initial_depends_on = [],
        unit = "rad",
        state,
        angle,
        derivative = "w_rw",
        describe = "Wheel angle relative to the swing arm, positive forward (state)"
    )]
    q: [f64; 3],
    #[output(
        name = "w_ds",
        index = 0,
        depends_on = W_DS,
        initial_depends_on = ["r_ds", "r_ws", "w_rw_start"],
        unit = "rad/s",
        state,
        derivative = "a_ds",
        describe = "Drive sprocket speed"
    )]
    #[output(
        name = "w_sa",
        index = 1,
        depends_on = ["w_sa"],
        initial_depends_on = [],
        unit = "rad/s",
        state,
        derivative = "a_sa",
        describe = "Swing-arm speed (0 in the QSS model)"
    )]
    #[output(
        name = "w_rw",
        index = 2,
        depends_on = ["w_rw"],
        initial_depends_on = ["w_rw_start"],
        unit = "rad/s",
        state,
        derivative = "a_rw",
        describe = "Wheel speed relative to the swing arm"
    )]
    w: [f64; 3],
    #[output(name = "a_ds", index = 0, unit = "rad/s2", depends_on = DYNAMIC, initial_depends_on = &INITIAL_DYNAMICS, describe = "Drive sprocket acceleration")]
    #[output(name = "a_sa", index = 1, unit = "rad/s2", depends_on = DYNAMIC, initial_depends_on = &INITIAL_DYNAMICS, describe = "Swing-arm acceleration")]
    #[output(name = "a_rw", index = 2, unit = "rad/s2", depends_on = DYNAMIC, initial_depends_on = &INITIAL_DYNAMICS, describe = "Wheel acceleration relative to the swing arm")]
    a: [f64; 3],
    #[output(unit = "rad", depends_on = THETA_WHEEL, initial_depends_on = &INITIAL_POSE, describe = "Absolute wheel angle theta_sa + theta_rw")]
    theta_wheel: f64,
    #[output(unit = "rad/s", depends_on = ["w_sa", "w_rw"], initial_depends_on = ["w_rw_start"], describe = "Absolute wheel speed w_sa + w_rw")]
    w_wheel: f64,
    #[output(name = "T_upper", unit = "N", depends_on = DYNAMIC, initial_depends_on = &INITIAL_DYNAMICS, describe = "Tension of the upper run (>= 0)")]
    t_u: f64,
    #[output(name = "T_lower", unit = "N", depends_on = DYNAMIC, initial_depends_on = INITIAL_WHEEL_TORQUES, describe = "Tension of the lower run (>= 0)")]
    t_l: f64,
    #[output(name = "e_upper", unit = "m", depends_on = GEOMETRY, initial_depends_on = &INITIAL_RUNS, describe = "Extension of the upper run (negative: slack)")]
    e_u: f64,
    #[output(name = "e_lower", unit = "m", depends_on = GEOMETRY, initial_depends_on = &INITIAL_RUNS, describe = "Extension of the lower run (negative: slack)")]
    e_l: f64,
    #[output(unit = "N.m", depends_on = DYNAMIC, initial_depends_on = &INITIAL_DYNAMICS, describe = "Torque of the chain on the drive sprocket, r_ds (T_lower - T_upper)")]
    tau_chain_ds: f64,
    #[output(unit = "N.m", depends_on = DYNAMIC, initial_depends_on = &INITIAL_DYNAMICS, describe = "Torque of the chain on the wheel sprocket, r_ws (T_upper - T_lower)")]
    tau_chain_rw: f64,
    #[output(unit = "N.m", depends_on = DYNAMIC, initial_depends_on = &INITIAL_DYNAMICS, describe = "Moment of the chain about the pivot on swing arm and wheel together (squat moment), positive lifting the wheel")]
    tau_chain_sa: f64,
    #[output(name = "chain_mode", start = FREE, min = LOWER as f64, max = BOTH as f64, depends_on = [], initial_depends_on = &INITIAL_MODE, describe = "Taut run: 1 upper, -1 lower, 0 none (slack), 2 both (full model)")]
    mode: i32,
    #[output(unit = "J", depends_on = W_DS, initial_depends_on = ["J_ds", "J_rw", "r_ds", "r_ws", "w_rw_start"], describe = "Kinetic energy of sprocket, swing arm and wheel")]
    energy_kinetic: f64,
    #[output(unit = "J", depends_on = THETA_SA, initial_depends_on = &INITIAL_POSE, describe = "Potential energy in gravity, 0 at theta_sa_ref")]
    energy_gravity: f64,
    #[output(unit = "J", depends_on = THETA_SA, initial_depends_on = &INITIAL_POSE, describe = "Potential energy of the suspension, 0 at theta_sa_ref")]
    energy_suspension: f64,
    #[output(unit = "J", depends_on = GEOMETRY, initial_depends_on = &INITIAL_CHAIN_ENERGY, describe = "Elastic energy of the chain (0 in the inextensible model)")]
    energy_chain: f64,
    #[output(unit = "W", depends_on = DISSIPATION, initial_depends_on = ["r_ds", "r_ws", "gamma_ds", "gamma_rw", "w_rw_start", "c_brake"], describe = "Power dissipated by friction, damping and the brake")]
    power_dissipated: f64,
    #[output(
        unit = "J",
        depends_on = ["energy_dissipated"],
        initial_depends_on = [],
        state,
        derivative = "power_dissipated",
        describe = "Energy dissipated since the start, impacts included (state)"
    )]
    energy_dissipated: f64,
    #[output(unit = "J", min = 0.0, depends_on = [], initial_depends_on = [], describe = "Energy lost in the impacts of the inextensible chain taking up its slack")]
    energy_impact: f64,
    #[output(min = 0.0, depends_on = [], initial_depends_on = [], describe = "Impacts of the inextensible chain since the start")]
    impact_count: i32,
    #[calculated_parameter(
        name = "I_sa",
        initial_depends_on = ["J_sa", "m_sa", "m_rw", "l_sa", "d_sa"],
        unit = "kg.m2",
        describe = "Inertia of swing arm and wheel mass about the pivot, J_sa + m_sa d_sa^2 + m_rw l_sa^2"
    )]
    i_sa: f64,
    #[calculated_parameter(
        name = "G_sa",
        initial_depends_on = ["m_sa", "m_rw", "l_sa", "d_sa", "g"],
        unit = "N.m",
        describe = "Gravity moment amplitude g (m_sa d_sa + m_rw l_sa)"
    )]
    g_sa: f64,
    #[calculated_parameter(
        name = "L_upper_0",
        initial_depends_on = &INITIAL_LENGTH,
        unit = "m",
        describe = "Upper-run length at which it goes taut (lengths between material marks)"
    )]
    l_u0: f64,
    #[calculated_parameter(
        name = "L_lower_0",
        initial_depends_on = &INITIAL_SLACK_LENGTH,
        unit = "m",
        describe = "Lower-run length at which it goes taut"
    )]
    l_l0: f64,
}

impl ChainDrive {
    fn inputs(&self) -> Inputs {
        Inputs {
            tau_eng: self.tau_eng,
            tau_load: self.tau_load,
            c_brake: self.c_brake,
        }
    }

    fn lengths(&self) -> Rest {
        Rest {
            l_u0: self.l_u0,
            l_l0: self.l_l0,
        }
    }

    /// Sprockets that overlap at swing-arm angle `th` (named `variable`): the chain cannot wrap.
    fn overlap(&self, variable: &'static str, th: f64) -> Invalid {
        let l = &self.bike.layout;
        Invalid::new(
            variable,
            th,
            format!(
                "the sprockets overlap there: their centres are {} m apart, less than r_ds + r_ws = {} m (l_sa = {}, ds_x = {}, ds_z = {}), so the chain cannot wrap",
                l.clearance(th) + l.r_ds + l.r_ws,
                l.r_ds + l.r_ws,
                l.l_sa,
                l.ds_x,
                l.ds_z
            ),
        )
    }

    /// The motion at this instant under the selected chain model.
    fn motion(&self) -> Motion {
        let (b, u, rest) = (self.bike.bike(), self.inputs(), self.lengths());
        let arm = |b: &Bike<f64>, load: &ArmLoad| b.qss_arm(load, self.q[1]);
        self.motion_of(&b, (self.q, self.w), u, rest, arm)
    }

    /// The motion under the selected chain model, in the number type of the equations; `arm`
    /// gives the QSS swing-arm angle that balances its load.
    #[inline(always)]
    fn motion_of<S: Scalar>(
        &self,
        b: &Bike<S>,
        (q, w): ([S; 3], [S; 3]),
        u: Inputs<S>,
        rest: Rest<S>,
        arm: impl FnOnce(&Bike<S>, &ArmLoad<S>) -> S,
    ) -> Motion<S> {
        match self.chain_model {
            QSS => b.qss(q, w, u, rest, self.mode, arm),
            INEXTENSIBLE => b.inextensible(q, w, u, rest, self.mode),
            _ => b.full(q, w, u, rest, self.mode),
        }
    }

    /// The outputs' and state derivatives' tangent with the parameters `b`, the states `q`,
    /// `w` and the rest lengths `rest` moving as they do; the inputs move with their seeds.
    fn tangent_with(
        &self,
        seed: &Self,
        tangent: &mut Self,
        b: &Bike<Dual>,
        (q, w): ([Dual; 3], [Dual; 3]),
        rest: Rest<Dual>,
    ) {
        let dual = Dual::seeded;
        let u = Inputs {
            tau_eng: dual(self.tau_eng, seed.tau_eng),
            tau_load: dual(self.tau_load, seed.tau_load),
            c_brake: dual(self.c_brake, seed.c_brake),
        };
        let values = self.bike.bike();
        let arm = |b: &Bike<Dual>, load: &ArmLoad<Dual>| {
            b.arm_moving(values.qss_arm(&load.value(), q[1].re), load)
        };
        let m = self.motion_of(b, (q, w), u, rest, arm);
        let o = b.outputs(&m, b.g_sa());
        let eps = |v: [Dual; 3]| v.map(|x| x.eps);
        let t = tangent;
        (t.q, t.w, t.a) = (eps(m.q), eps(m.speeds), eps(m.dw));
        (t.t_u, t.t_l, t.e_u, t.e_l) = (m.t_u.eps, m.t_l.eps, m.e_u.eps, m.e_l.eps);
        (t.energy_chain, t.power_dissipated) = (m.energy_chain.eps, m.power_dissipated.eps);
        (t.theta_wheel, t.w_wheel) = (o.theta_wheel.eps, o.w_wheel.eps);
        t.tau_chain_ds = o.tau_chain_ds.eps;
        t.tau_chain_rw = o.tau_chain_rw.eps;
        t.tau_chain_sa = o.tau_chain_sa.eps;
        t.energy_kinetic = o.energy_kinetic.eps;
        t.energy_gravity = o.energy_gravity.eps;
        t.energy_suspension = o.energy_suspension.eps;
    }
}

const DYNAMIC: &[&str] = &[
    "theta_ds", "theta_sa", "theta_rw", "w_ds", "w_sa", "w_rw", "tau_eng", "tau_load", "c_brake",
];
// The QSS model solves the sprocket and swing-arm angles from the torques (the brake's through
// w_rw) and the sprocket speed from the wheel's through the chain: the outputs that read them
// follow those knowns too.
const THETA_SA: &[&str] = &["theta_sa", "w_rw", "tau_eng", "tau_load", "c_brake"];
const THETA_DS: &[&str] = &[
    "theta_ds", "theta_sa", "theta_rw", "w_rw", "tau_eng", "tau_load", "c_brake",
];
const THETA_WHEEL: &[&str] = &[
    "theta_sa", "theta_rw", "w_rw", "tau_eng", "tau_load", "c_brake",
];
/// The run lengths: every angle.
const GEOMETRY: &[&str] = THETA_DS;
const W_DS: &[&str] = &["theta_sa", "w_ds", "w_sa", "w_rw"];
const DISSIPATION: &[&str] = &[
    "theta_ds", "theta_sa", "theta_rw", "w_ds", "w_sa", "w_rw", "c_brake",
];

// At the start the swing arm and wheel are at rest relative to each other (w_sa = 0) and every
// chain run just reaches its rest length (plus the slack), so the full and inextensible models
// start without tension; the QSS model solves the pose and the tensions from the torques, the
// inertias (the wheel's acceleration loads the chain) and the wheel's start speed.
const INITIAL_POSE: [&str; 22] = [
    "J_ds",
    "J_rw",
    "m_sa",
    "m_rw",
    "l_sa",
    "d_sa",
    "r_ds",
    "r_ws",
    "ds_x",
    "ds_z",
    "g",
    "k_susp",
    "tau_preload",
    "theta_sa_ref",
    "gamma_ds",
    "gamma_rw",
    "chain_model",
    "theta_sa_start",
    "w_rw_start",
    "tau_eng",
    "tau_load",
    "c_brake",
];
/// The sprocket angle and the runs' extensions also follow the chain's stretch and slack.
const INITIAL_RUNS: [&str; 24] = concat_names(&[&INITIAL_POSE, &["k_chain", "slack"]]);
/// The accelerations and the chain's loads also follow the swing arm's inertia.
const INITIAL_DYNAMICS: [&str; 23] = concat_names(&[&INITIAL_POSE, &["J_sa"]]);
/// Which run is taut also follows the chain's damping.
const INITIAL_MODE: [&str; 24] = concat_names(&[&INITIAL_DYNAMICS, &["c_chain"]]);
/// The torque balance of sprocket and wheel alone (the QSS lower run).
const INITIAL_WHEEL_TORQUES: &[&str] = &[
    "J_ds",
    "J_rw",
    "r_ds",
    "r_ws",
    "gamma_ds",
    "gamma_rw",
    "chain_model",
    "w_rw_start",
    "tau_eng",
    "tau_load",
    "c_brake",
];
const INITIAL_CHAIN_ENERGY: [&str; 12] = concat_names(&[INITIAL_WHEEL_TORQUES, &["k_chain"]]);
/// The run lengths at the start pose.
const INITIAL_LENGTH: [&str; 6] = ["l_sa", "r_ds", "r_ws", "ds_x", "ds_z", "theta_sa_start"];
const INITIAL_SLACK_LENGTH: [&str; 7] = concat_names(&[&INITIAL_LENGTH, &["slack"]]);

impl fmu_runtime::Equations<f64> for ChainDrive {
    fn derivatives(&self, _t: f64, dx: &mut [f64]) {
        let m = self.motion();
        let (s, dx) = (Self::STATE, &mut dx[..Self::STATES]);
        for (angle, speed) in [s.theta_ds, s.theta_sa, s.theta_rw]
            .into_iter()
            .zip(m.speeds)
        {
            dx[angle] = speed;
        }
        for (speed, acceleration) in [s.w_ds, s.w_sa, s.w_rw].into_iter().zip(m.dw) {
            dx[speed] = acceleration;
        }
        dx[s.energy_dissipated] = m.power_dissipated;
    }
    fn outputs(&mut self, _t: f64) {
        let m = self.motion();
        // The QSS model's swing arm and sprocket, and a taut inextensible chain's sprocket, are
        // algebraic: their values follow from the states and inputs, and never feed back.
        let o = self.bike.bike().outputs(&m, self.g_sa);
        self.q = m.q;
        self.w = m.speeds;
        self.a = m.dw;
        (self.theta_wheel, self.w_wheel) = (o.theta_wheel, o.w_wheel);
        (self.t_u, self.t_l, self.e_u, self.e_l) = (m.t_u, m.t_l, m.e_u, m.e_l);
        self.tau_chain_ds = o.tau_chain_ds;
        self.tau_chain_rw = o.tau_chain_rw;
        self.tau_chain_sa = o.tau_chain_sa;
        self.energy_kinetic = o.energy_kinetic;
        self.energy_gravity = o.energy_gravity;
        self.energy_suspension = o.energy_suspension;
        self.energy_chain = m.energy_chain;
        self.power_dissipated = m.power_dissipated;
    }
}

impl Model for ChainDrive {
    const NAME: &'static str = "ChainDrive";
    const DESCRIPTION: &'static str = "Planar half-bike with a drive chain (full elastic, quasi-steady-state or inextensible chain model): engine and load torques and a brake in, motion, chain tensions and energies out";
    const DOCUMENTATION: &'static str = include_str!("../documentation.html");
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(2.0);
    const EVENT_INDICATORS: usize = 3;

    fn stiff(&self) -> bool {
        self.chain_model == FULL && self.bike.bike().chain_rate(self.q[1]) > STIFF_RATE
    }

    fn initialize(&mut self, _t: f64) -> Result<(), Invalid> {
        self.bike.check()?;
        if !(FULL..=INEXTENSIBLE).contains(&self.chain_model) {
            return Err(Invalid::new(
                "chain_model",
                f64::from(self.chain_model),
                "must be 1 (full elastic), 2 (quasi-steady-state) or 3 (inextensible)",
            ));
        }
        let th = self.theta_sa_start;
        if !th.is_finite() {
            return Err(Invalid::new(
                "theta_sa_start",
                th,
                "must be a finite number",
            ));
        }
        if !self.bike.layout.wraps(th) {
            return Err(self.overlap("theta_sa_start", th));
        }
        let b = self.bike.bike();
        self.i_sa = b.i_sa();
        self.g_sa = b.g_sa();
        let start = b.start(th, self.w_rw_start);
        (self.q, self.w) = (start.q, start.w);
        (self.l_u0, self.l_l0) = (start.rest.l_u0, start.rest.l_l0);
        self.energy_dissipated = 0.0;
        self.energy_impact = 0.0;
        self.impact_count = 0;
        self.mode = match self.chain_model {
            FULL => FREE,
            _ => UPPER,
        };
        Ok(())
    }

    fn check_inputs(&self) -> Result<(), Invalid> {
        if self.c_brake < 0.0 {
            return Err(Invalid::new(
                "c_brake",
                self.c_brake,
                "must be >= 0: a brake cannot drive the wheel",
            ));
        }
        Ok(())
    }

    /// Full chain: per run, min(e, e + c/k de/dt), positive exactly while it pulls, on the
    /// side of the run's mode. QSS: the signed tension T_u - T_l, on the side of the taut run.
    /// Inextensible, taut: the taut run's tension (positive) and the other run's extension
    /// (negative); slack: both extensions (negative). Hysteresis 1e-9 N on tensions (1e-12 of
    /// a kilonewton, their size), and on lengths the extension of a run pulling 1e-9 N
    /// (1e-14 m at the default stiffness), so that a run taut just inside the hysteresis pushes
    /// no more than that. The third, in every model, is the sprockets' clearance: the swing arm
    /// reaching a pose where they overlap ends the run there with that reason.
    fn event_indicators(&self, _t: f64, z: &mut Indicators) {
        use Side::{Negative, Positive};
        const TENSION: f64 = 1e3 * HYSTERESIS;
        let length = TENSION / self.bike.k;
        // The full model's indicators need no dynamics; the QSS model solves its swing-arm
        // angle, and the inextensible one its tension, in the motion.
        let (th_sa, g) = match self.chain_model {
            QSS | INEXTENSIBLE => {
                let m = self.motion();
                (m.q[1], m.indicators)
            }
            _ => (
                self.q[1],
                self.bike
                    .bike()
                    .full_indicators(self.q, self.w, self.lengths()),
            ),
        };
        let layout = &self.bike.layout;
        let size = layout.r_ds + layout.r_ws;
        z.set(2, layout.clearance(th_sa), Positive, HYSTERESIS * size);
        let taut = |run| Side::of(self.mode == run || self.mode == BOTH);
        let sides = match (self.chain_model, self.mode) {
            (QSS, mode) => [(Side::of(mode == UPPER), TENSION), (Positive, TENSION)],
            (INEXTENSIBLE, UPPER | LOWER) => [(Positive, TENSION), (Negative, length)],
            (INEXTENSIBLE, _) => [(Negative, length), (Negative, length)],
            _ => [(taut(UPPER), length), (taut(LOWER), length)],
        };
        for (i, (g, (side, h))) in g.into_iter().zip(sides).enumerate() {
            z.set(i, g, side, h);
        }
    }

    fn event_update(&mut self, _t: f64) -> Result<bool, Invalid> {
        let th = self.motion().q[1];
        if !self.bike.layout.wraps(th) {
            return Err(self.overlap("theta_sa", th));
        }
        let (b, u, rest) = (self.bike.bike(), self.inputs(), self.lengths());
        let change = match self.chain_model {
            QSS => b.qss_switch(self.q, self.w, u, self.mode),
            INEXTENSIBLE => b.inextensible_switch(self.q, self.w, u, rest, self.mode)?,
            _ => b.full_switch(self.q, self.w, u, rest, self.mode),
        };
        let Some(s) = change else {
            return Ok(false);
        };
        self.mode = s.mode;
        self.q = s.q;
        self.w = s.w;
        if let Some(lost) = s.impact {
            self.energy_impact += lost;
            self.energy_dissipated += lost;
            self.impact_count += 1;
        }
        Ok(true)
    }

    /// Both runs taut only in the full model; impacts only in the inextensible one.
    fn check_state(&self) -> Result<(), Invalid> {
        if self.mode == BOTH && self.chain_model != FULL {
            return Err(Invalid::new(
                "chain_mode",
                f64::from(self.mode),
                format!(
                    "both runs taut (2) happens in the full model (chain_model 1), not in chain_model {}",
                    self.chain_model
                ),
            ));
        }
        if self.chain_model != INEXTENSIBLE {
            for (name, value) in [
                ("impact_count", f64::from(self.impact_count)),
                ("energy_impact", self.energy_impact),
            ] {
                if value != 0.0 {
                    return Err(Invalid::new(
                        name,
                        value,
                        format!(
                            "only the inextensible chain (chain_model 3) has impacts, not chain_model {}",
                            self.chain_model
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    fn describe_event(&self, _t: f64) -> Option<String> {
        let run = match self.mode {
            UPPER => "upper run taut",
            LOWER => "lower run taut",
            FREE => "chain slack",
            _ => "both runs taut",
        };
        Some(
            if self.chain_model == INEXTENSIBLE && self.impact_count > 0 {
                format!(
                    "{run} (impacts {}, energy lost in them {:.6e} J)",
                    self.impact_count, self.energy_impact
                )
            } else {
                run.to_string()
            },
        )
    }

    type Jets = fmu_runtime::Unlifted;

    const PROVIDES_DERIVATIVES: bool = true;

    /// The same equations in dual numbers, in the chain mode the drive is in: the states and
    /// inputs move with their seeds; the QSS swing-arm angle by the implicit function theorem
    /// (`Bike::arm_moving`).
    fn tangent(&self, _t: f64, seed: &Self, tangent: &mut Self) {
        let dual = Dual::seeded;
        let q = [0, 1, 2].map(|i| dual(self.q[i], seed.q[i]));
        let w = [0, 1, 2].map(|i| dual(self.w[i], seed.w[i]));
        let rest = Rest {
            l_u0: dual(self.l_u0, seed.l_u0),
            l_l0: dual(self.l_l0, seed.l_l0),
        };
        let b = self.bike.along(&seed.bike);
        self.tangent_with(seed, tangent, &b, (q, w), rest);
    }

    /// At the start the states and the rest lengths follow from the parameters
    /// (`Bike::start`), and so do the calculated parameters.
    fn initial_tangent(&self, _t: f64, seed: &Self, tangent: &mut Self) {
        let dual = Dual::seeded;
        let b = self.bike.along(&seed.bike);
        let th = dual(self.theta_sa_start, seed.theta_sa_start);
        let start = b.start(th, dual(self.w_rw_start, seed.w_rw_start));
        self.tangent_with(seed, tangent, &b, (start.q, start.w), start.rest);
        (tangent.i_sa, tangent.g_sa) = (b.i_sa().eps, b.g_sa().eps);
        (tangent.l_u0, tangent.l_l0) = (start.rest.l_u0.eps, start.rest.l_l0.eps);
        if self.chain_model == FULL {
            // The full chain starts untensioned whatever the parameters: the upper run just
            // taut (L_upper_0 is its length) and at rest relative to its sprockets (w_ds =
            // rho w_rw). Its tension's tangent is 0, not the rounding of the run rate's
            // cancelling terms, and so are the chain torques'.
            let t = tangent;
            (t.t_u, t.tau_chain_ds, t.tau_chain_rw, t.tau_chain_sa) = (0.0, 0.0, 0.0, 0.0);
        }
    }
}

export_fmu!(ChainDrive);
