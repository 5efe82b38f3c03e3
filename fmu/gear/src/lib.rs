//! Ideal gear with the inertias rigidly attached to its two flanges.
//!
//! Equations and derivation: `documentation.html` next to this file (it ships in the FMU).

use fmu_runtime::{export_fmu, Experiment, Invalid, Model, Variables};
use gear_interface::GearInterface;

const DYNAMIC: &[&str] = &["tau_a", "tau_b"];
const INITIAL_DYNAMIC: &[&str] = &["ratio", "J_a", "J_b", "tau_a", "tau_b"];

#[derive(Debug, Clone, Variables)]
pub struct Gear {
    #[variables(depends_on(a_a, a_b) = DYNAMIC, initial_depends_on(a_a, a_b) = INITIAL_DYNAMIC)]
    #[start(GearInterface::with_parameters(2.0, 0.1, 0.2, 0.0, 0.0))]
    gear: GearInterface,
    #[output(unit = "N.m", describe = "Torque the gear exerts on the a-side inertia through flange a",
             depends_on = DYNAMIC, initial_depends_on = INITIAL_DYNAMIC)]
    tau_mesh: f64,
    #[output(unit = "W", describe = "Power dissipated in the gear: identically 0 for the ideal gear",
             depends_on = [], initial_depends_on = [])]
    power_loss: f64,
    #[support_torque(depends_on = DYNAMIC, initial_depends_on = INITIAL_DYNAMIC)]
    tau_support: f64,
    #[calculated_parameter(name = "J_reflected", unit = "kg.m2", describe = "Inertia reflected to flange b: J_b + ratio^2 J_a",
                           initial_depends_on = ["ratio", "J_a", "J_b"])]
    j_reflected: f64,
}

impl Gear {
    /// Acceleration of the b side: (J_b + ratio^2 J_a) a_b = tau_b + ratio tau_a.
    fn acceleration_b(&self) -> f64 {
        (self.gear.tau_b + self.gear.ratio * self.gear.tau_a) / self.j_reflected
    }
}

impl Model for Gear {
    const NAME: &'static str = "Gear";
    const DESCRIPTION: &'static str =
        "Ideal gear phi_a = ratio*phi_b carrying the inertias of both flanges, driven by external torques";
    const DOCUMENTATION: &'static str = include_str!("../documentation.html");
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(2.0);

    fn initialize(&mut self, _t: f64) -> Result<(), Invalid> {
        self.j_reflected = self.gear.reflected_inertia()?;
        Ok(())
    }

    fn derivatives(&self, _t: f64, dx: &mut [f64]) {
        let (s, dx) = (Self::STATE.gear, &mut dx[..Self::STATES]);
        dx[s.phi_b] = self.gear.w_b;
        dx[s.w_b] = self.acceleration_b();
    }

    fn update_outputs(&mut self, _t: f64) {
        self.gear.a_b = self.acceleration_b();
        self.gear.phi_a = self.gear.ratio * self.gear.phi_b;
        self.gear.w_a = self.gear.ratio * self.gear.w_b;
        self.gear.a_a = self.gear.ratio * self.gear.a_b;
        // J_a a_a = tau_a + tau_mesh
        self.tau_mesh = self.gear.j_a * self.gear.a_a - self.gear.tau_a;
        self.power_loss = 0.0;
        // The inner ideal gear's cut torques: t = -tau_mesh at flange a, -ratio t at flange b;
        // the support takes the rest, -(t - ratio t).
        self.tau_support = (1.0 - self.gear.ratio) * self.tau_mesh;
    }
}

export_fmu!(Gear);
