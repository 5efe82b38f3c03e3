//! ChainDrive: the thesis's planar half-bike (drive sprocket on the fixed centre assembly, swing
//! arm on its pivot with a suspension, rear wheel with its sprocket) joined by a chain whose runs
//! pull but never push, with three chain models selected by `chain_model`:
//! 1 full elastic, 2 quasi-steady-state (QSS), 3 inextensible with a slack mode and impacts.
//!
//! Equations and derivation: `documentation.html` next to this file (it ships in the FMU).

pub mod geometry;
mod half_bike;

use fmu_runtime::math::sin;
use fmu_runtime::{
    export_fmu, integer, real, Experiment, Indicators, Invalid, Model, Side, Var, HYSTERESIS,
};
pub use half_bike::{HalfBike, BOTH, FREE, LOWER, UPPER};

pub const FULL: i32 = 1;
pub const QSS: i32 = 2;
pub const INEXTENSIBLE: i32 = 3;

/// A decay rate above which the full model is integrated with BDF (1/s).
const STIFF_RATE: f64 = 1e5;

#[derive(Debug, Clone)]
pub struct ChainDrive {
    bike: HalfBike,
    chain_model: i32,
    theta_sa_start: f64,
    w_rw_start: f64,
    // inputs
    tau_eng: f64,
    tau_load: f64,
    c_brake: f64,
    // states: angles, speeds, dissipated energy
    q: [f64; 3],
    w: [f64; 3],
    energy_dissipated: f64,
    // discrete states
    mode: i32,
    energy_impact: f64,
    impact_count: i32,
    // calculated parameters
    l_u0: f64,
    l_l0: f64,
    i_sa: f64,
    g_sa: f64,
    // outputs
    theta_wheel: f64,
    w_wheel: f64,
    a: [f64; 3],
    t_u: f64,
    t_l: f64,
    e_u: f64,
    e_l: f64,
    tau_chain_ds: f64,
    tau_chain_rw: f64,
    tau_chain_sa: f64,
    energy_kinetic: f64,
    energy_gravity: f64,
    energy_suspension: f64,
    energy_chain: f64,
    power_dissipated: f64,
}

impl Default for ChainDrive {
    fn default() -> Self {
        ChainDrive {
            bike: HalfBike::default(),
            chain_model: FULL,
            theta_sa_start: 0.0,
            w_rw_start: 0.0,
            tau_eng: 0.0,
            tau_load: 0.0,
            c_brake: 0.0,
            q: [0.0; 3],
            w: [0.0; 3],
            energy_dissipated: 0.0,
            mode: FREE,
            energy_impact: 0.0,
            impact_count: 0,
            l_u0: 0.0,
            l_l0: 0.0,
            i_sa: 0.0,
            g_sa: 0.0,
            theta_wheel: 0.0,
            w_wheel: 0.0,
            a: [0.0; 3],
            t_u: 0.0,
            t_l: 0.0,
            e_u: 0.0,
            e_l: 0.0,
            tau_chain_ds: 0.0,
            tau_chain_rw: 0.0,
            tau_chain_sa: 0.0,
            energy_kinetic: 0.0,
            energy_gravity: 0.0,
            energy_suspension: 0.0,
            energy_chain: 0.0,
            power_dissipated: 0.0,
        }
    }
}

impl ChainDrive {
    fn inputs(&self) -> half_bike::Inputs {
        half_bike::Inputs {
            tau_eng: self.tau_eng,
            tau_load: self.tau_load,
            c_brake: self.c_brake,
        }
    }

    fn lengths(&self) -> half_bike::Rest {
        half_bike::Rest {
            l_u0: self.l_u0,
            l_l0: self.l_l0,
        }
    }

    /// The motion at this instant under the selected chain model.
    fn motion(&self) -> half_bike::Motion {
        let (b, u, rest) = (&self.bike, self.inputs(), self.lengths());
        match self.chain_model {
            QSS => b.qss(self.q, self.w, u, rest, self.mode),
            INEXTENSIBLE => b.inextensible(self.q, self.w, u, rest, self.mode),
            _ => b.full(self.q, self.w, u, rest, self.mode),
        }
    }
}

const DYNAMIC: &[&str] = &[
    "theta_ds", "theta_sa", "theta_rw", "w_ds", "w_sa", "w_rw", "tau_eng", "tau_load", "c_brake",
];

impl Model for ChainDrive {
    const NAME: &'static str = "ChainDrive";
    const DESCRIPTION: &'static str = "Planar half-bike with a drive chain (full elastic, quasi-steady-state or inextensible chain model): engine and load torques and a brake in, motion, chain tensions and energies out";
    const DOCUMENTATION: &'static str = include_str!("../documentation.html");
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(2.0);
    const STATES: usize = 7;
    const EVENT_INDICATORS: usize = 2;
    const ANGLE_STATES: &'static [usize] = &[0, 2];

    fn variables() -> Vec<Var<Self>> {
        vec![
            Var::parameter("J_ds", real!(bike.j_ds)).unit("kg.m2").min(0.0).describe("Inertia of the drive sprocket and what turns with it (> 0)"),
            Var::parameter("J_sa", real!(bike.j_sa)).unit("kg.m2").min(0.0).describe("Inertia of the swing arm about its centre of mass"),
            Var::parameter("J_rw", real!(bike.j_rw)).unit("kg.m2").min(0.0).describe("Inertia of the rear wheel with its sprocket about the axle (> 0)"),
            Var::parameter("m_sa", real!(bike.m_sa)).unit("kg").min(0.0).describe("Mass of the swing arm"),
            Var::parameter("m_rw", real!(bike.m_rw)).unit("kg").min(0.0).describe("Mass of the rear wheel"),
            Var::parameter("l_sa", real!(bike.layout.l_sa)).unit("m").min(0.0).describe("Swing-arm length, pivot to wheel axle (> 0)"),
            Var::parameter("d_sa", real!(bike.d_sa)).unit("m").describe("Distance from the pivot to the swing arm's centre of mass, along the arm"),
            Var::parameter("r_ds", real!(bike.layout.r_ds)).unit("m").min(0.0).describe("Pitch radius of the drive sprocket (> 0)"),
            Var::parameter("r_ws", real!(bike.layout.r_ws)).unit("m").min(0.0).describe("Pitch radius of the wheel sprocket (> 0)"),
            Var::parameter("ds_x", real!(bike.layout.ds_x)).unit("m").describe("Drive sprocket centre, forward of the swing-arm pivot"),
            Var::parameter("ds_z", real!(bike.layout.ds_z)).unit("m").describe("Drive sprocket centre, above the swing-arm pivot (negative: below)"),
            Var::parameter("k_chain", real!(bike.k)).unit("N/m").min(0.0).describe("Stiffness of each chain run (> 0; full and QSS models)"),
            Var::parameter("c_chain", real!(bike.c)).unit("N.s/m").min(0.0).describe("Damping of each chain run while taut (full model)"),
            Var::parameter("slack", real!(bike.slack)).unit("m").min(0.0).describe("Chain length beyond the taut geometry at the start (> 0), all of it in the lower run"),
            Var::parameter("g", real!(bike.g)).unit("m/s2").min(0.0).describe("Gravity (0: off)"),
            Var::parameter("k_susp", real!(bike.k_susp)).unit("N.m/rad").min(0.0).describe("Suspension rate about the pivot (> 0)"),
            Var::parameter("c_susp", real!(bike.c_susp)).unit("N.m.s/rad").min(0.0).describe("Suspension damping about the pivot"),
            Var::parameter("tau_preload", real!(bike.tau_preload)).unit("N.m").describe("Suspension torque at theta_sa_ref, pushing the wheel down (default: the weight of arm and wheel at g = 9.81)"),
            Var::parameter("theta_sa_ref", real!(bike.theta_sa_ref)).unit("rad").describe("Swing-arm angle where the suspension torque is tau_preload"),
            Var::parameter("gamma_ds", real!(bike.gamma_ds)).unit("N.m.s/rad").min(0.0).describe("Viscous friction of the drive sprocket's bearing"),
            Var::parameter("gamma_rw", real!(bike.gamma_rw)).unit("N.m.s/rad").min(0.0).describe("Viscous friction of the wheel bearing (reacts on the swing arm)"),
            Var::parameter("chain_model", integer!(chain_model)).min(1.0).max(3.0).describe("1 full elastic, 2 quasi-steady-state, 3 inextensible"),
            Var::parameter("theta_sa_start", real!(theta_sa_start)).unit("rad").describe("Initial swing-arm angle"),
            Var::parameter("w_rw_start", real!(w_rw_start)).unit("rad/s").describe("Initial wheel speed (the drive sprocket starts at r_ws/r_ds times it)"),
            Var::input("tau_eng", real!(tau_eng)).unit("N.m").describe("Engine torque on the drive sprocket (positive drives the bike forward and tightens the upper run)"),
            Var::input("tau_load", real!(tau_load)).unit("N.m").describe("Road torque on the rear wheel, positive forward (a resistance is negative); reacts on the ground"),
            Var::input("c_brake", real!(c_brake)).unit("N.m.s/rad").min(0.0).describe("Brake coefficient (>= 0): brake torque -c_brake w_rw on the wheel, reacting on the swing arm"),
            Var::output("theta_ds", real!(q[0])).unit("rad").describe("Drive sprocket angle, positive forward (state; algebraic in the QSS model)"),
            Var::output("theta_sa", real!(q[1])).unit("rad").describe("Swing-arm angle, positive wheel up (state; algebraic in the QSS model)"),
            Var::output("theta_rw", real!(q[2])).unit("rad").describe("Wheel angle relative to the swing arm, positive forward (state)"),
            Var::output("w_ds", real!(w[0])).unit("rad/s").describe("Drive sprocket speed").derivative_of("theta_ds"),
            Var::output("w_sa", real!(w[1])).unit("rad/s").describe("Swing-arm speed (0 in the QSS model)").derivative_of("theta_sa"),
            Var::output("w_rw", real!(w[2])).unit("rad/s").describe("Wheel speed relative to the swing arm").derivative_of("theta_rw"),
            Var::output("a_ds", real!(a[0])).unit("rad/s2").describe("Drive sprocket acceleration").derivative_of("w_ds").depends_on(DYNAMIC),
            Var::output("a_sa", real!(a[1])).unit("rad/s2").describe("Swing-arm acceleration").derivative_of("w_sa").depends_on(DYNAMIC),
            Var::output("a_rw", real!(a[2])).unit("rad/s2").describe("Wheel acceleration relative to the swing arm").derivative_of("w_rw").depends_on(DYNAMIC),
            Var::output("theta_wheel", real!(theta_wheel)).unit("rad").describe("Absolute wheel angle theta_sa + theta_rw"),
            Var::output("w_wheel", real!(w_wheel)).unit("rad/s").describe("Absolute wheel speed w_sa + w_rw"),
            Var::output("T_upper", real!(t_u)).unit("N").describe("Tension of the upper run (>= 0)").depends_on(DYNAMIC),
            Var::output("T_lower", real!(t_l)).unit("N").describe("Tension of the lower run (>= 0)").depends_on(DYNAMIC),
            Var::output("e_upper", real!(e_u)).unit("m").describe("Extension of the upper run (negative: slack)").depends_on(DYNAMIC),
            Var::output("e_lower", real!(e_l)).unit("m").describe("Extension of the lower run (negative: slack)").depends_on(DYNAMIC),
            Var::output("tau_chain_ds", real!(tau_chain_ds)).unit("N.m").describe("Torque of the chain on the drive sprocket, r_ds (T_lower - T_upper)").depends_on(DYNAMIC),
            Var::output("tau_chain_rw", real!(tau_chain_rw)).unit("N.m").describe("Torque of the chain on the wheel sprocket, r_ws (T_upper - T_lower)").depends_on(DYNAMIC),
            Var::output("tau_chain_sa", real!(tau_chain_sa)).unit("N.m").describe("Moment of the chain about the pivot on swing arm and wheel together (squat moment), positive lifting the wheel").depends_on(DYNAMIC),
            Var::output("chain_mode", integer!(mode)).describe("Taut run: 1 upper, -1 lower, 0 none (slack), 2 both (full model)"),
            Var::output("energy_kinetic", real!(energy_kinetic)).unit("J").describe("Kinetic energy of sprocket, swing arm and wheel"),
            Var::output("energy_gravity", real!(energy_gravity)).unit("J").describe("Potential energy in gravity, 0 at theta_sa_ref"),
            Var::output("energy_suspension", real!(energy_suspension)).unit("J").describe("Potential energy of the suspension, 0 at theta_sa_ref"),
            Var::output("energy_chain", real!(energy_chain)).unit("J").describe("Elastic energy of the chain (0 in the inextensible model)"),
            Var::output("power_dissipated", real!(power_dissipated)).unit("W").describe("Power dissipated by friction, damping and the brake").derivative_of("energy_dissipated").depends_on(DYNAMIC),
            Var::output("energy_dissipated", real!(energy_dissipated)).unit("J").describe("Energy dissipated since the start, impacts included (state)"),
            Var::output("energy_impact", real!(energy_impact)).unit("J").describe("Energy lost in the impacts of the inextensible chain taking up its slack"),
            Var::output("impact_count", integer!(impact_count)).describe("Impacts of the inextensible chain since the start"),
            Var::calculated_parameter("I_sa", real!(i_sa)).unit("kg.m2").describe("Inertia of swing arm and wheel mass about the pivot, J_sa + m_sa d_sa^2 + m_rw l_sa^2"),
            Var::calculated_parameter("G_sa", real!(g_sa)).unit("N.m").describe("Gravity moment amplitude g (m_sa d_sa + m_rw l_sa)"),
            Var::calculated_parameter("L_upper_0", real!(l_u0)).unit("m").describe("Upper-run length at which it goes taut (lengths between material marks)"),
            Var::calculated_parameter("L_lower_0", real!(l_l0)).unit("m").describe("Lower-run length at which it goes taut"),
        ]
    }

    fn stiff(&self) -> bool {
        self.chain_model == FULL && self.bike.chain_rate(self.q[1]) > STIFF_RATE
    }

    fn initialize(&mut self) -> Result<(), Invalid> {
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
        let layout = self.bike.layout;
        if !layout.wraps(th) {
            return Err(Invalid::new(
                "r_ws",
                layout.r_ws,
                format!(
                    "the sprockets overlap at theta_sa_start = {th}: their centres are {} m apart, less than r_ds + r_ws = {} m, so the chain cannot wrap",
                    layout.runs(th).d,
                    layout.r_ds + layout.r_ws
                ),
            ));
        }
        let b = &self.bike;
        self.i_sa = b.i_sa();
        self.g_sa = b.g_sa();
        let rho = b.layout.r_ws / b.layout.r_ds;
        self.q = [0.0, th, 0.0];
        self.w = [rho * self.w_rw_start, 0.0, self.w_rw_start];
        // The upper run just taut, the slack all in the lower run.
        let (l_u, l_l) = b.lengths(self.q);
        (self.l_u0, self.l_l0) = (l_u, l_l + b.slack);
        self.energy_dissipated = 0.0;
        self.energy_impact = 0.0;
        self.impact_count = 0;
        self.mode = match self.chain_model {
            FULL => FREE,
            _ => UPPER,
        };
        if self.chain_model == QSS {
            self.w[0] = rho * self.w[2];
        }
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

    fn get_states(&self, x: &mut [f64]) {
        x[..3].copy_from_slice(&self.q);
        x[3..6].copy_from_slice(&self.w);
        x[6] = self.energy_dissipated;
    }

    fn set_states(&mut self, x: &[f64]) {
        self.q.copy_from_slice(&x[..3]);
        self.w.copy_from_slice(&x[3..6]);
        self.energy_dissipated = x[6];
    }

    fn derivatives(&self, _t: f64, dx: &mut [f64]) {
        let m = self.motion();
        dx[..3].copy_from_slice(&m.speeds);
        dx[3..6].copy_from_slice(&m.dw);
        dx[6] = m.power_dissipated;
    }

    /// Full chain: per run, min(e, e + c/k de/dt), positive exactly while it pulls, on the
    /// side of the run's mode. QSS: the signed tension T_u - T_l, on the side of the taut run.
    /// Inextensible, taut: the taut run's tension (positive) and the other run's extension
    /// (negative); slack: both extensions (negative). Hysteresis 1e-9 N on tensions (1e-12 of
    /// a kilonewton, their size), and on lengths the extension of a run pulling 1e-9 N
    /// (1e-14 m at the default stiffness), so that a run taut just inside the hysteresis pushes
    /// no more than that.
    fn event_indicators(&self, _t: f64, z: &mut Indicators) {
        use Side::{Negative, Positive};
        const TENSION: f64 = 1e3 * HYSTERESIS;
        let length = TENSION / self.bike.k;
        let g = self.motion().indicators;
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
        let (b, u, rest) = (self.bike, self.inputs(), self.lengths());
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

    fn update_outputs(&mut self, _t: f64) {
        let m = self.motion();
        // The QSS model's swing arm and sprocket, and a taut inextensible chain's sprocket, are
        // algebraic: their values follow from the states and inputs, and never feed back.
        self.q = m.q;
        self.w = m.speeds;
        self.a = m.dw;
        self.theta_wheel = self.q[1] + self.q[2];
        self.w_wheel = self.w[1] + self.w[2];
        (self.t_u, self.t_l, self.e_u, self.e_l) = (m.t_u, m.t_l, m.e_u, m.e_l);
        let b = &self.bike;
        let (r_ds, r_ws) = (b.layout.r_ds, b.layout.r_ws);
        self.tau_chain_ds = r_ds * (m.t_l - m.t_u);
        self.tau_chain_rw = r_ws * (m.t_u - m.t_l);
        let runs = b.layout.runs(self.q[1]);
        self.tau_chain_sa = -m.t_u * (runs.g_u[1] - r_ws) - m.t_l * (runs.g_l[1] + r_ws);
        self.energy_kinetic = b.kinetic(self.w);
        let dth = self.q[1] - b.theta_sa_ref;
        self.energy_gravity = self.g_sa * (sin(self.q[1]) - sin(b.theta_sa_ref));
        self.energy_suspension = -b.tau_preload * dth + 0.5 * b.k_susp * dth * dth;
        self.energy_chain = m.energy_chain;
        self.power_dissipated = m.power_dissipated;
    }
}

export_fmu!(ChainDrive);
