//! Ideal gear with the inertias rigidly attached to its two flanges.
//!
//! Equations and derivation: `documentation.html` next to this file (it ships in the FMU).

use fmu_runtime::{export_fmu, real, Experiment, Invalid, Model, Var};

#[derive(Debug, Clone)]
pub struct Gear {
    // parameters
    ratio: f64,
    j_a: f64,
    j_b: f64,
    phi_b_start: f64,
    w_b_start: f64,
    // calculated parameter
    j_reflected: f64,
    // inputs
    tau_a: f64,
    tau_b: f64,
    // states
    phi_b: f64,
    w_b: f64,
    // outputs
    phi_a: f64,
    w_a: f64,
    a_a: f64,
    a_b: f64,
    tau_mesh: f64,
    power_loss: f64,
    tau_support: f64,
}

impl Default for Gear {
    fn default() -> Self {
        Gear {
            ratio: 2.0,
            j_a: 0.1,
            j_b: 0.2,
            phi_b_start: 0.0,
            w_b_start: 0.0,
            j_reflected: 0.0,
            tau_a: 0.0,
            tau_b: 0.0,
            phi_b: 0.0,
            w_b: 0.0,
            phi_a: 0.0,
            w_a: 0.0,
            a_a: 0.0,
            a_b: 0.0,
            tau_mesh: 0.0,
            tau_support: 0.0,
            power_loss: 0.0,
        }
    }
}

impl Gear {
    /// Acceleration of the b side: (J_b + ratio^2 J_a) a_b = tau_b + ratio tau_a.
    fn acceleration_b(&self) -> f64 {
        (self.tau_b + self.ratio * self.tau_a) / self.j_reflected
    }
}

const DYNAMIC: &[&str] = &["tau_a", "tau_b"];
const INITIAL_DYNAMIC: &[&str] = &["ratio", "J_a", "J_b", "tau_a", "tau_b"];

impl Model for Gear {
    const NAME: &'static str = "Gear";
    const DESCRIPTION: &'static str =
        "Ideal gear phi_a = ratio*phi_b carrying the inertias of both flanges, driven by external torques";
    const DOCUMENTATION: &'static str = include_str!("../documentation.html");
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(2.0);
    const STATES: usize = 2;
    const ANGLE_STATES: &'static [usize] = &[0];

    fn variables() -> Vec<Var<Self>> {
        let mut vars = gear_interface::gear_interface!(DYNAMIC, Some(INITIAL_DYNAMIC));
        vars.extend([
            Var::output("tau_mesh", real!(tau_mesh))
                .unit("N.m")
                .describe("Torque the gear exerts on the a-side inertia through flange a")
                .depends_on(DYNAMIC)
                .initial_depends_on(INITIAL_DYNAMIC),
            Var::output("power_loss", real!(power_loss))
                .unit("W")
                .describe("Power dissipated in the gear: identically 0 for the ideal gear")
                .depends_on(&[])
                .initial_depends_on(&[]),
            Var::support_torque(real!(tau_support))
                .depends_on(DYNAMIC)
                .initial_depends_on(INITIAL_DYNAMIC),
            Var::calculated_parameter("J_reflected", real!(j_reflected))
                .unit("kg.m2")
                .describe("Inertia reflected to flange b: J_b + ratio^2 J_a")
                .initial_depends_on(&["ratio", "J_a", "J_b"]),
        ]);
        vars
    }

    fn initialize(&mut self) -> Result<(), Invalid> {
        self.j_reflected = gear_interface::reflected_inertia(self.ratio, self.j_a, self.j_b)?;
        self.phi_b = self.phi_b_start;
        self.w_b = self.w_b_start;
        Ok(())
    }

    fn get_states(&self, x: &mut [f64]) {
        x[0] = self.phi_b;
        x[1] = self.w_b;
    }

    fn set_states(&mut self, x: &[f64]) {
        self.phi_b = x[0];
        self.w_b = x[1];
    }

    fn derivatives(&self, _t: f64, dx: &mut [f64]) {
        dx[0] = self.w_b;
        dx[1] = self.acceleration_b();
    }

    fn update_outputs(&mut self, _t: f64) {
        self.a_b = self.acceleration_b();
        self.phi_a = self.ratio * self.phi_b;
        self.w_a = self.ratio * self.w_b;
        self.a_a = self.ratio * self.a_b;
        // J_a a_a = tau_a + tau_mesh
        self.tau_mesh = self.j_a * self.a_a - self.tau_a;
        self.power_loss = 0.0;
        // The inner ideal gear's cut torques: t = -tau_mesh at flange a, -ratio t at flange b;
        // the support takes the rest, -(t - ratio t).
        self.tau_support = (1.0 - self.ratio) * self.tau_mesh;
    }
}

export_fmu!(Gear);
