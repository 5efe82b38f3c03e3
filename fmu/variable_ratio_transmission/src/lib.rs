//! Compliant variable-ratio gearbox with the base and follower inertias: a complete driveline
//! unit. Physics in the `variable-ratio` crate; documentation ships from there.

use fmu_runtime::declare::concat_names;
use fmu_runtime::{
    export_fmu, Equations, Experiment, Indicators, Invalid, Jet, Model, Param, Scalar, Variables,
};
use variable_ratio::{
    check_ratio, power_flow_indicator, update_power_flow, Compliance, Transmission, BASE_TORQUE,
    BOTH_TORQUES, FOLLOWER_TORQUE,
};

#[derive(Debug, Clone, Variables)]
pub struct VariableRatioTransmission<S: Scalar = f64> {
    #[variables]
    params: Transmission<S>,
    #[parameter(
        name = "J_B",
        start = 0.01,
        unit = "kg.m2",
        min = 0.0,
        describe = "Base shaft inertia (> 0)"
    )]
    j_b: Param<S>,
    #[parameter(
        name = "J_F",
        start = 0.02,
        unit = "kg.m2",
        min = 0.0,
        describe = "Follower shaft inertia (> 0)"
    )]
    j_f: Param<S>,
    #[parameter(name = "w_B_start", unit = "rad/s", describe = "Initial base speed")]
    w_b_start: Param<S>,
    #[parameter(
        name = "w_F_start",
        unit = "rad/s",
        describe = "Initial follower speed"
    )]
    w_f_start: Param<S>,
    #[input(
        name = "tau_B_ext",
        unit = "N.m",
        describe = "Driving torque on the base shaft"
    )]
    tau_b_ext: S,
    #[input(
        name = "tau_F_ext",
        unit = "N.m",
        describe = "Load torque on the follower shaft"
    )]
    tau_f_ext: S,
    #[input(
        start = 1.0,
        min = 0.0,
        describe = "Gear ratio g_FB = w_B/w_F (ideal), > 0"
    )]
    r: S,
    #[output(name = "phi_B", unit = "rad", depends_on = ["phi_B"], initial_depends_on = [], state, angle, derivative = "w_B", describe = "Base angle (state)")]
    phi_b: S,
    #[output(name = "w_B", unit = "rad/s", depends_on = ["w_B"], initial_depends_on = ["w_B_start"], state, from = w_b_start, derivative = "a_B", describe = "Base speed (state)")]
    w_b: S,
    #[output(name = "a_B", unit = "rad/s2", depends_on = BASE, initial_depends_on = &INITIAL_A_B, describe = "Base acceleration")]
    a_b: S,
    #[output(name = "phi_F", unit = "rad", depends_on = ["phi_F"], initial_depends_on = [], state, angle, derivative = "w_F", describe = "Follower angle (state)")]
    phi_f: S,
    #[output(name = "w_F", unit = "rad/s", depends_on = ["w_F"], initial_depends_on = ["w_F_start"], state, from = w_f_start, derivative = "a_F", describe = "Follower speed (state)")]
    w_f: S,
    #[output(name = "a_F", unit = "rad/s2", depends_on = FOLLOWER, initial_depends_on = &INITIAL_A_F, describe = "Follower acceleration")]
    a_f: S,
    #[output(name = "tau_B", unit = "N.m", depends_on = COMPLIANCE, initial_depends_on = &INITIAL_TAU_B, describe = "Torque the base shaft applies to the transmission")]
    tau_b: S,
    #[output(name = "tau_F", unit = "N.m", depends_on = COMPLIANCE, initial_depends_on = &INITIAL_TAU_F, describe = "Torque the follower shaft applies to the transmission")]
    tau_f: S,
    #[support_torque(depends_on = COMPLIANCE, initial_depends_on = &INITIAL_LOSSES)]
    tau_support: S,
    #[variables(
        depends_on(power_loss) = COMPLIANCE,
        initial_depends_on(phi_dot) = ["direction", "w_B_start", "w_F_start", "r"],
        initial_depends_on(power_loss) = &INITIAL_LOSSES,
        initial_depends_on(power_flow) = ["k_v", "tau_B_start", "direction", "w_B_start", "w_F_start", "r"]
    )]
    compliance: Compliance<S>,
}

impl<S: Scalar> VariableRatioTransmission<S> {
    fn torques(&self) -> variable_ratio::Torques<S> {
        self.params
            .torques(self.compliance.phi, self.w_b, self.w_f, self.r)
    }

    /// Each shaft's acceleration: its external torque less the torque it applies to the
    /// transmission, over its inertia.
    fn accelerations(&self, q: &variable_ratio::Torques<S>) -> [S; 2] {
        [
            (self.tau_b_ext - q.tau_b) / self.j_b,
            (self.tau_f_ext - q.tau_f) / self.j_f,
        ]
    }
}

/// The compliance torque's knowns; each acceleration adds its own shaft's external torque.
const COMPLIANCE: &[&str] = &["w_B", "w_F", "phi", "r"];
const BASE: &[&str] = &["w_B", "w_F", "phi", "tau_B_ext", "r"];
const FOLLOWER: &[&str] = &["w_B", "w_F", "phi", "tau_F_ext", "r"];
const START_SPEEDS: [&str; 3] = ["w_B_start", "w_F_start", "r"];
const INITIAL_TAU_B: [&str; 7] = concat_names(&[&BASE_TORQUE, &START_SPEEDS]);
const INITIAL_TAU_F: [&str; 10] = concat_names(&[&FOLLOWER_TORQUE, &START_SPEEDS]);
const INITIAL_LOSSES: [&str; 11] = concat_names(&[&BOTH_TORQUES, &START_SPEEDS]);
/// Each acceleration adds its shaft's inertia and external torque.
const INITIAL_A_B: [&str; 9] = concat_names(&[&INITIAL_TAU_B, &["J_B", "tau_B_ext"]]);
const INITIAL_A_F: [&str; 12] = concat_names(&[&INITIAL_TAU_F, &["J_F", "tau_F_ext"]]);

/// The gearbox's equations, once for the simulation (`f64`) and its exact derivatives (jets).
impl<S: Scalar> Equations<S> for VariableRatioTransmission<S> {
    fn derivatives(&self, _t: f64, dx: &mut [S]) {
        let q = self.torques();
        let [a_b, a_f] = self.accelerations(&q);
        let (s, dx) = (
            VariableRatioTransmission::STATE,
            &mut dx[..<VariableRatioTransmission as Variables>::STATES],
        );
        dx[s.phi_b] = self.w_b;
        dx[s.w_b] = a_b;
        dx[s.phi_f] = self.w_f;
        dx[s.w_f] = a_f;
        dx[s.compliance.phi] = q.phi_dot;
        dx[s.compliance.energy_loss] = q.power_loss;
    }

    fn outputs(&mut self, _t: f64) {
        let q = self.torques();
        self.tau_b = q.tau_b;
        self.tau_f = q.tau_f;
        self.compliance.follow(&q);
        [self.a_b, self.a_f] = self.accelerations(&q);
        // The shafts apply tau_B and tau_F to the transmission (mesh, spring, bearings); the
        // transmission carries no inertia, so its housing balances them.
        self.tau_support = -(q.tau_b + q.tau_f);
    }

    /// The compliance angle from tau_B_start and k_p; both shafts' angles count from 0.
    fn calculated(&mut self, _t: f64) {
        self.compliance.start(&self.params);
        self.phi_b = S::constant(0.0);
        self.phi_f = S::constant(0.0);
    }
}

impl Model for VariableRatioTransmission {
    const NAME: &'static str = "VariableRatioTransmission";
    const DESCRIPTION: &'static str =
        "Compliant gearbox with a controllable ratio r and losses, carrying base and follower inertias";
    const DOCUMENTATION: &'static str = variable_ratio::DOCUMENTATION;
    // The 338 Hz mode is damped by zeta = 0.0018, so phase error adds up over hundreds of
    // periods: 1e-8 leaves 1e-4 of tau_F's range after 0.5 s, 1e-12 leaves 7e-9, at three times
    // the cost (see documentation.html). Importers that set no tolerance get this one.
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0).with_tolerance(1e-12);
    const EVENT_INDICATORS: usize = 1;

    fn stiff(&self) -> bool {
        self.params.stiff(self.j_b, self.j_f, self.r, self.tau_f)
    }

    fn initialize(&mut self, t: f64) -> Result<(), Invalid> {
        self.params.check()?;
        for (name, j) in [("J_B", self.j_b), ("J_F", self.j_f)] {
            if !(j.is_finite() && j > 0.0) {
                return Err(Invalid::new(name, j, "must be positive"));
            }
        }
        check_ratio(self.r)?;
        self.calculated(t);
        self.compliance.power_flow = if self.torques().flow < 0.0 { -1 } else { 1 };
        Ok(())
    }

    fn check_inputs(&self) -> Result<(), Invalid> {
        check_ratio(self.r)
    }

    fn event_indicators(&self, _t: f64, z: &mut Indicators) {
        power_flow_indicator(z, self.torques().flow, self.compliance.power_flow);
    }

    fn event_update(&mut self, _t: f64) -> Result<bool, Invalid> {
        let flow = self.torques().flow;
        Ok(update_power_flow(&mut self.compliance.power_flow, flow))
    }

    fn check_state(&self) -> Result<(), Invalid> {
        self.compliance.check()
    }

    /// One lane per state (both shafts' angles and speeds, phi, energy_loss); the three
    /// continuous inputs' columns (tau_B_ext, tau_F_ext, r) are swept apart.
    type Jets = VariableRatioTransmission<Jet<6>>;
}

export_fmu!(VariableRatioTransmission);
