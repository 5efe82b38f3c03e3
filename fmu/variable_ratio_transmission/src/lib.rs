//! Compliant variable-ratio gearbox with the base and follower inertias: a complete driveline
//! unit. Physics in the `variable-ratio` crate; documentation ships from there.

use fmu_runtime::{export_fmu, integer, real, Experiment, Indicators, Invalid, Model, Var};
use variable_ratio::{
    check_ratio, power_flow_indicator, ratio_input, transmission_parameters, update_power_flow,
    Transmission,
};

#[derive(Debug, Clone)]
pub struct VariableRatioTransmission {
    // parameters
    params: Transmission,
    tau_b_start: f64,
    j_b: f64,
    j_f: f64,
    w_b_start: f64,
    w_f_start: f64,
    // inputs
    tau_b_ext: f64,
    tau_f_ext: f64,
    r: f64,
    // states
    phi_b: f64,
    w_b: f64,
    phi_f: f64,
    w_f: f64,
    phi: f64,
    energy_loss: f64,
    power_flow: i32,
    // outputs
    tau_b: f64,
    tau_f: f64,
    power_loss: f64,
    phi_dot: f64,
    tau_support: f64,
    a_b: f64,
    a_f: f64,
}

impl Default for VariableRatioTransmission {
    fn default() -> Self {
        VariableRatioTransmission {
            params: Transmission::default(),
            tau_b_start: 0.0,
            j_b: 0.01,
            j_f: 0.02,
            w_b_start: 0.0,
            w_f_start: 0.0,
            tau_b_ext: 0.0,
            tau_f_ext: 0.0,
            r: 1.0,
            phi_b: 0.0,
            w_b: 0.0,
            phi_f: 0.0,
            w_f: 0.0,
            phi: 0.0,
            energy_loss: 0.0,
            power_flow: 1,
            tau_b: 0.0,
            tau_f: 0.0,
            power_loss: 0.0,
            phi_dot: 0.0,
            tau_support: 0.0,
            a_b: 0.0,
            a_f: 0.0,
        }
    }
}

impl VariableRatioTransmission {
    fn torques(&self) -> variable_ratio::Torques {
        self.params.torques(self.phi, self.w_b, self.w_f, self.r)
    }
}

const ALL: &[&str] = &["w_B", "w_F", "phi", "tau_B_ext", "tau_F_ext", "r"];

impl Model for VariableRatioTransmission {
    const NAME: &'static str = "VariableRatioTransmission";
    const DESCRIPTION: &'static str =
        "Compliant gearbox with a controllable ratio r and losses, carrying base and follower inertias";
    const DOCUMENTATION: &'static str = variable_ratio::DOCUMENTATION;
    // The 338 Hz mode is damped by zeta = 0.0018, so phase error adds up over hundreds of
    // periods: 1e-8 leaves 1e-4 of tau_F's range after 0.5 s, 1e-12 leaves 7e-9, at three times
    // the cost (see documentation.html). Importers that set no tolerance get this one.
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0).with_tolerance(1e-12);
    const STATES: usize = 6;
    const EVENT_INDICATORS: usize = 1;
    const ANGLE_STATES: &'static [usize] = &[0, 2];

    fn stiff(&self) -> bool {
        self.params.stiff(self.j_b, self.j_f, self.r, self.tau_f)
    }

    fn variables() -> Vec<Var<Self>> {
        let mut vars: Vec<Var<Self>> = transmission_parameters!();
        vars.extend([
            Var::parameter("J_B", real!(j_b))
                .unit("kg.m2")
                .min(0.0)
                .describe("Base shaft inertia (> 0)"),
            Var::parameter("J_F", real!(j_f))
                .unit("kg.m2")
                .min(0.0)
                .describe("Follower shaft inertia (> 0)"),
            Var::parameter("w_B_start", real!(w_b_start))
                .unit("rad/s")
                .describe("Initial base speed"),
            Var::parameter("w_F_start", real!(w_f_start))
                .unit("rad/s")
                .describe("Initial follower speed"),
            Var::input("tau_B_ext", real!(tau_b_ext))
                .unit("N.m")
                .describe("Driving torque on the base shaft"),
            Var::input("tau_F_ext", real!(tau_f_ext))
                .unit("N.m")
                .describe("Load torque on the follower shaft"),
            ratio_input(real!(r)),
            Var::output("phi_B", real!(phi_b))
                .unit("rad")
                .describe("Base angle (state)")
                .depends_on(&["phi_B"]),
            Var::output("w_B", real!(w_b))
                .unit("rad/s")
                .describe("Base speed (state)")
                .derivative_of("phi_B")
                .depends_on(&["w_B"]),
            Var::output("a_B", real!(a_b))
                .unit("rad/s2")
                .describe("Base acceleration")
                .derivative_of("w_B")
                .depends_on(ALL),
            Var::output("phi_F", real!(phi_f))
                .unit("rad")
                .describe("Follower angle (state)")
                .depends_on(&["phi_F"]),
            Var::output("w_F", real!(w_f))
                .unit("rad/s")
                .describe("Follower speed (state)")
                .derivative_of("phi_F")
                .depends_on(&["w_F"]),
            Var::output("a_F", real!(a_f))
                .unit("rad/s2")
                .describe("Follower acceleration")
                .derivative_of("w_F")
                .depends_on(ALL),
            Var::output("tau_B", real!(tau_b))
                .unit("N.m")
                .describe("Torque the base shaft applies to the transmission")
                .depends_on(ALL),
            Var::output("tau_F", real!(tau_f))
                .unit("N.m")
                .describe("Torque the follower shaft applies to the transmission")
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
        self.params.check()?;
        for (name, j) in [("J_B", self.j_b), ("J_F", self.j_f)] {
            if !(j.is_finite() && j > 0.0) {
                return Err(Invalid::new(name, j, "must be positive"));
            }
        }
        check_ratio(self.r)?;
        self.phi = self.params.phi_start(self.tau_b_start);
        self.phi_b = 0.0;
        self.phi_f = 0.0;
        self.w_b = self.w_b_start;
        self.w_f = self.w_f_start;
        self.energy_loss = 0.0;
        self.power_flow = if self.torques().flow < 0.0 { -1 } else { 1 };
        Ok(())
    }

    fn check_inputs(&self) -> Result<(), Invalid> {
        check_ratio(self.r)
    }

    fn get_states(&self, x: &mut [f64]) {
        x.copy_from_slice(&[
            self.phi_b,
            self.w_b,
            self.phi_f,
            self.w_f,
            self.phi,
            self.energy_loss,
        ]);
    }

    fn set_states(&mut self, x: &[f64]) {
        (
            self.phi_b,
            self.w_b,
            self.phi_f,
            self.w_f,
            self.phi,
            self.energy_loss,
        ) = (x[0], x[1], x[2], x[3], x[4], x[5]);
    }

    fn derivatives(&self, _t: f64, dx: &mut [f64]) {
        let q = self.torques();
        dx[0] = self.w_b;
        dx[1] = (self.tau_b_ext - q.tau_b) / self.j_b;
        dx[2] = self.w_f;
        dx[3] = (self.tau_f_ext - q.tau_f) / self.j_f;
        dx[4] = q.phi_dot;
        dx[5] = q.power_loss;
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
        self.a_b = (self.tau_b_ext - q.tau_b) / self.j_b;
        self.a_f = (self.tau_f_ext - q.tau_f) / self.j_f;
        // The shafts apply tau_B and tau_F to the transmission (mesh, spring, bearings); the
        // transmission carries no inertia, so its housing balances them.
        self.tau_support = -(q.tau_b + q.tau_f);
    }
}

export_fmu!(VariableRatioTransmission);
