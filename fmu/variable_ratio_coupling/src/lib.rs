//! The compliant variable-ratio element without inertias: speeds in, torques out. It joins two
//! inertial FMUs without an algebraic loop. Physics in the `variable-ratio` crate.

use fmu_runtime::declare::concat_names;
use fmu_runtime::{
    export_fmu, Equations, Experiment, Indicators, Invalid, Jet, Model, Scalar, Variables,
};
use variable_ratio::{
    check_ratio, power_flow_indicator, update_power_flow, Compliance, Transmission, BASE_TORQUE,
    BOTH_TORQUES, FOLLOWER_TORQUE,
};

#[derive(Debug, Clone, Variables)]
pub struct VariableRatioCoupling<S: Scalar = f64> {
    #[variables]
    params: Transmission<S>,
    #[input(name = "w_B", unit = "rad/s", describe = "Base shaft speed")]
    w_b: S,
    #[input(name = "w_F", unit = "rad/s", describe = "Follower shaft speed")]
    w_f: S,
    #[input(
        start = 1.0,
        min = 0.0,
        describe = "Gear ratio g_FB = w_B/w_F (ideal), > 0"
    )]
    r: S,
    #[output(name = "tau_B", unit = "N.m", depends_on = ALL, initial_depends_on = &INITIAL_TAU_B, describe = "Torque the base shaft applies to the coupling (the base shaft feels -tau_B)")]
    tau_b: S,
    #[output(name = "tau_F", unit = "N.m", depends_on = ALL, initial_depends_on = &INITIAL_TAU_F, describe = "Torque the follower shaft applies to the coupling (the follower feels -tau_F)")]
    tau_f: S,
    #[support_torque(depends_on = ALL, initial_depends_on = &INITIAL_LOSSES)]
    tau_support: S,
    #[variables(
        depends_on(power_loss) = ALL,
        initial_depends_on(phi_dot) = ["direction", "w_B", "w_F", "r"],
        initial_depends_on(power_loss) = &INITIAL_LOSSES,
        initial_depends_on(power_flow) = ["k_v", "tau_B_start", "direction", "w_B", "w_F", "r"]
    )]
    compliance: Compliance<S>,
}

impl<S: Scalar> VariableRatioCoupling<S> {
    fn torques(&self) -> variable_ratio::Torques<S> {
        self.params
            .torques(self.compliance.phi, self.w_b, self.w_f, self.r)
    }
}

const ALL: &[&str] = &["phi", "w_B", "w_F", "r"];
const SPEEDS: [&str; 3] = ["w_B", "w_F", "r"];
const INITIAL_TAU_B: [&str; 7] = concat_names(&[&BASE_TORQUE, &SPEEDS]);
const INITIAL_TAU_F: [&str; 10] = concat_names(&[&FOLLOWER_TORQUE, &SPEEDS]);
const INITIAL_LOSSES: [&str; 11] = concat_names(&[&BOTH_TORQUES, &SPEEDS]);

/// The coupling's equations, once for the simulation (`f64`) and its exact derivatives (jets).
impl<S: Scalar> Equations<S> for VariableRatioCoupling<S> {
    fn derivatives(&self, _t: f64, dx: &mut [S]) {
        let q = self.torques();
        let (s, dx) = (
            VariableRatioCoupling::STATE.compliance,
            &mut dx[..<VariableRatioCoupling as Variables>::STATES],
        );
        dx[s.phi] = q.phi_dot;
        dx[s.energy_loss] = q.power_loss;
    }

    fn outputs(&mut self, _t: f64) {
        let q = self.torques();
        self.tau_b = q.tau_b;
        self.tau_f = q.tau_f;
        self.compliance.follow(&q);
        // No inertia: the housing balances what the shafts apply.
        self.tau_support = -(q.tau_b + q.tau_f);
    }

    /// The compliance angle from tau_B_start and k_p.
    fn calculated(&mut self, _t: f64) {
        self.compliance.start(&self.params);
    }
}

impl Model for VariableRatioCoupling {
    const NAME: &'static str = "VariableRatioCoupling";
    const DESCRIPTION: &'static str =
        "Compliant variable-ratio coupling without inertias: shaft speeds and ratio in, torques out";
    const DOCUMENTATION: &'static str = variable_ratio::DOCUMENTATION;
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0);
    const EVENT_INDICATORS: usize = 1;

    fn initialize(&mut self, t: f64) -> Result<(), Invalid> {
        self.params.check()?;
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

    /// One lane per state (phi, energy_loss); the three continuous inputs' columns (w_B, w_F,
    /// r) are swept apart.
    type Jets = VariableRatioCoupling<Jet<2>>;
}

export_fmu!(VariableRatioCoupling);
