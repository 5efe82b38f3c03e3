//! The compliant variable-ratio element without inertias: speeds in, torques out. It joins two
//! inertial FMUs without an algebraic loop. Physics in the `variable-ratio` crate.

use fmu_runtime::declare::concat_names;
use fmu_runtime::{export_fmu, Dual, Experiment, Indicators, Invalid, Model, Variables};
use variable_ratio::{
    check_ratio, power_flow_indicator, update_power_flow, Compliance, Transmission, BASE_TORQUE,
    BOTH_TORQUES, FOLLOWER_TORQUE,
};

#[derive(Debug, Clone, Variables)]
pub struct VariableRatioCoupling {
    #[variables]
    params: Transmission,
    #[input(name = "w_B", unit = "rad/s", describe = "Base shaft speed")]
    w_b: f64,
    #[input(name = "w_F", unit = "rad/s", describe = "Follower shaft speed")]
    w_f: f64,
    #[input(
        start = 1.0,
        min = 0.0,
        describe = "Gear ratio g_FB = w_B/w_F (ideal), > 0"
    )]
    r: f64,
    #[output(name = "tau_B", unit = "N.m", depends_on = ALL, initial_depends_on = &INITIAL_TAU_B, describe = "Torque the base shaft applies to the coupling (the base shaft feels -tau_B)")]
    tau_b: f64,
    #[output(name = "tau_F", unit = "N.m", depends_on = ALL, initial_depends_on = &INITIAL_TAU_F, describe = "Torque the follower shaft applies to the coupling (the follower feels -tau_F)")]
    tau_f: f64,
    #[support_torque(depends_on = ALL, initial_depends_on = &INITIAL_LOSSES)]
    tau_support: f64,
    #[variables(
        depends_on(power_loss) = ALL,
        initial_depends_on(phi_dot) = ["direction", "w_B", "w_F", "r"],
        initial_depends_on(power_loss) = &INITIAL_LOSSES,
        initial_depends_on(power_flow) = ["k_v", "tau_B_start", "direction", "w_B", "w_F", "r"]
    )]
    compliance: Compliance,
}

impl VariableRatioCoupling {
    fn torques(&self) -> variable_ratio::Torques {
        self.params
            .torques(self.compliance.phi, self.w_b, self.w_f, self.r)
    }
}

const ALL: &[&str] = &["phi", "w_B", "w_F", "r"];
const SPEEDS: [&str; 3] = ["w_B", "w_F", "r"];
const INITIAL_TAU_B: [&str; 7] = concat_names(&[&BASE_TORQUE, &SPEEDS]);
const INITIAL_TAU_F: [&str; 10] = concat_names(&[&FOLLOWER_TORQUE, &SPEEDS]);
const INITIAL_LOSSES: [&str; 11] = concat_names(&[&BOTH_TORQUES, &SPEEDS]);

impl fmu_runtime::Equations<f64> for VariableRatioCoupling {
    fn derivatives(&self, _t: f64, dx: &mut [f64]) {
        let q = self.torques();
        let (s, dx) = (Self::STATE.compliance, &mut dx[..Self::STATES]);
        dx[s.phi] = q.phi_dot;
        dx[s.energy_loss] = q.power_loss;
    }
    fn outputs(&mut self, _t: f64) {
        let q = self.torques();
        self.tau_b = q.tau_b;
        self.tau_f = q.tau_f;
        self.compliance.power_loss = q.power_loss;
        self.compliance.phi_dot = q.phi_dot;
        // No inertia: the housing balances what the shafts apply.
        self.tau_support = -(q.tau_b + q.tau_f);
    }
}

impl Model for VariableRatioCoupling {
    const NAME: &'static str = "VariableRatioCoupling";
    const DESCRIPTION: &'static str =
        "Compliant variable-ratio coupling without inertias: shaft speeds and ratio in, torques out";
    const DOCUMENTATION: &'static str = variable_ratio::DOCUMENTATION;
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0);
    const EVENT_INDICATORS: usize = 1;

    fn initialize(&mut self, _t: f64) -> Result<(), Invalid> {
        let t = self.params;
        t.check()?;
        check_ratio(self.r)?;
        self.compliance.phi = t.phi_start();
        self.compliance.energy_loss = 0.0;
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

    type Jets = fmu_runtime::Unlifted;

    const PROVIDES_DERIVATIVES: bool = true;

    /// The same equations in dual numbers (`Transmission::tangent`).
    fn tangent(&self, _t: f64, seed: &Self, tangent: &mut Self) {
        let speeds = [(self.w_b, seed.w_b), (self.w_f, seed.w_f), (self.r, seed.r)];
        let q = self.params.tangent(
            &seed.params,
            (&self.compliance, &seed.compliance),
            &mut tangent.compliance,
            speeds.map(|(x, d)| Dual::seeded(x, d)),
        );
        (tangent.tau_b, tangent.tau_f) = (q.tau_b.eps, q.tau_f.eps);
        tangent.tau_support = -(q.tau_b + q.tau_f).eps;
    }
}

export_fmu!(VariableRatioCoupling);
