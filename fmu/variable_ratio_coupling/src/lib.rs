//! The compliant variable-ratio element without inertias: speeds in, torques out. It joins two
//! inertial FMUs without an algebraic loop. Physics in the `variable-ratio` crate.

use fmu_runtime::{export_fmu, integer, real, Experiment, Indicators, Invalid, Model, Var};
use variable_ratio::{
    check_ratio, power_flow_indicator, ratio_input, transmission_parameters, update_power_flow,
    Transmission,
};

#[derive(Debug, Clone)]
pub struct VariableRatioCoupling {
    // parameters
    params: Transmission,
    tau_b_start: f64,
    // inputs
    w_b: f64,
    w_f: f64,
    r: f64,
    // states
    phi: f64,
    energy_loss: f64,
    power_flow: i32,
    // outputs
    tau_b: f64,
    tau_f: f64,
    power_loss: f64,
    phi_dot: f64,
    tau_support: f64,
}

impl Default for VariableRatioCoupling {
    fn default() -> Self {
        VariableRatioCoupling {
            params: Transmission::default(),
            tau_b_start: 0.0,
            w_b: 0.0,
            w_f: 0.0,
            r: 1.0,
            phi: 0.0,
            energy_loss: 0.0,
            power_flow: 1,
            tau_b: 0.0,
            tau_f: 0.0,
            power_loss: 0.0,
            phi_dot: 0.0,
            tau_support: 0.0,
        }
    }
}

impl VariableRatioCoupling {
    fn torques(&self) -> variable_ratio::Torques {
        self.params.torques(self.phi, self.w_b, self.w_f, self.r)
    }
}

const ALL: &[&str] = &["phi", "w_B", "w_F", "r"];

impl Model for VariableRatioCoupling {
    const NAME: &'static str = "VariableRatioCoupling";
    const DESCRIPTION: &'static str =
        "Compliant variable-ratio coupling without inertias: shaft speeds and ratio in, torques out";
    const DOCUMENTATION: &'static str = variable_ratio::DOCUMENTATION;
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0);
    const STATES: usize = 2;
    const EVENT_INDICATORS: usize = 1;

    fn variables() -> Vec<Var<Self>> {
        let mut vars: Vec<Var<Self>> = transmission_parameters!();
        vars.extend([
            Var::input("w_B", real!(w_b))
                .unit("rad/s")
                .describe("Base shaft speed"),
            Var::input("w_F", real!(w_f))
                .unit("rad/s")
                .describe("Follower shaft speed"),
            ratio_input(real!(r)),
            Var::output("tau_B", real!(tau_b))
                .unit("N.m")
                .describe(
                    "Torque the base shaft applies to the coupling (the base shaft feels -tau_B)",
                )
                .depends_on(ALL),
            Var::output("tau_F", real!(tau_f))
                .unit("N.m")
                .describe(
                    "Torque the follower shaft applies to the coupling (the follower feels -tau_F)",
                )
                .depends_on(ALL),
            Var::support_torque(real!(tau_support)).depends_on(ALL),
            Var::output("phi", real!(phi))
                .unit("rad")
                .describe("Compliance angle (state), dphi/dt = s r w_F - w_B")
                .depends_on(&["phi"]),
            Var::output("phi_dot", real!(phi_dot))
                .unit("rad/s")
                .describe("Rate of the compliance angle, s r w_F - w_B")
                .derivative_of("phi")
                .depends_on(ALL),
            Var::output("power_loss", real!(power_loss))
                .unit("W")
                .describe("Power dissipated by damping, mesh and bearings")
                .derivative_of("energy_loss")
                .depends_on(ALL),
            Var::output("energy_loss", real!(energy_loss))
                .unit("J")
                .describe("Energy dissipated since the start (state)")
                .depends_on(&["energy_loss"]),
            Var::output("power_flow", integer!(power_flow))
                .describe("+1 forward (base drives the follower), -1 reverse")
                .depends_on(ALL),
        ]);
        vars
    }

    fn initialize(&mut self) -> Result<(), Invalid> {
        let t = self.params;
        t.check()?;
        check_ratio(self.r)?;
        self.phi = t.phi_start(self.tau_b_start);
        self.energy_loss = 0.0;
        self.power_flow = if self.torques().flow < 0.0 { -1 } else { 1 };
        Ok(())
    }

    fn check_inputs(&self) -> Result<(), Invalid> {
        check_ratio(self.r)
    }

    fn get_states(&self, x: &mut [f64]) {
        x.copy_from_slice(&[self.phi, self.energy_loss]);
    }

    fn set_states(&mut self, x: &[f64]) {
        (self.phi, self.energy_loss) = (x[0], x[1]);
    }

    fn derivatives(&self, _t: f64, dx: &mut [f64]) {
        let q = self.torques();
        dx[0] = q.phi_dot;
        dx[1] = q.power_loss;
    }

    fn event_indicators(&self, _t: f64, z: &mut Indicators) {
        power_flow_indicator(z, self.torques().flow, self.power_flow);
    }

    fn event_update(&mut self, _t: f64) -> Result<bool, Invalid> {
        let flow = self.torques().flow;
        Ok(update_power_flow(&mut self.power_flow, flow))
    }

    fn update_outputs(&mut self, _t: f64) {
        let q = self.torques();
        self.tau_b = q.tau_b;
        self.tau_f = q.tau_f;
        self.power_loss = q.power_loss;
        self.phi_dot = q.phi_dot;
        // No inertia: the housing balances what the shafts apply.
        self.tau_support = -(q.tau_b + q.tau_f);
    }
}

export_fmu!(VariableRatioCoupling);
