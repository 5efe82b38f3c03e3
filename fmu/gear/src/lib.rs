//! Ideal gear with the inertias rigidly attached to its two flanges.
//!
//! Equations and derivation: `documentation.html` next to this file (it ships in the FMU).

use fmu_runtime::{
    export_fmu, Equations, Experiment, Invalid, Jet, Model, Param, Scalar, Variables,
};
use gear_interface::GearInterface;

const DYNAMIC: &[&str] = &["tau_a", "tau_b"];
const INITIAL_DYNAMIC: &[&str] = &["ratio", "J_a", "J_b", "tau_a", "tau_b"];

#[derive(Debug, Clone, Variables)]
pub struct Gear<S: Scalar = f64> {
    #[variables(depends_on(a_a, a_b) = DYNAMIC, initial_depends_on(a_a, a_b) = INITIAL_DYNAMIC)]
    #[start(GearInterface::with_parameters(2.0, 0.1, 0.2, 0.0, 0.0))]
    gear: GearInterface<S>,
    #[output(unit = "N.m", describe = "Torque the gear exerts on the a-side inertia through flange a",
             depends_on = DYNAMIC, initial_depends_on = INITIAL_DYNAMIC)]
    tau_mesh: S,
    #[output(unit = "W", describe = "Power dissipated in the gear: identically 0 for the ideal gear",
             depends_on = [], initial_depends_on = [])]
    power_loss: S,
    #[support_torque(depends_on = DYNAMIC, initial_depends_on = INITIAL_DYNAMIC)]
    tau_support: S,
    #[calculated_parameter(name = "J_reflected", unit = "kg.m2", describe = "Inertia reflected to flange b: J_b + ratio^2 J_a",
                           initial_depends_on = ["ratio", "J_a", "J_b"])]
    j_reflected: Param<S>,
}

impl<S: Scalar> Gear<S> {
    /// Acceleration of the b side: (J_b + ratio^2 J_a) a_b = tau_b + ratio tau_a.
    fn acceleration_b(&self) -> S {
        let g = &self.gear;
        (g.tau_b + g.ratio * g.tau_a) / self.j_reflected
    }
}

/// The gear's equations, once for the simulation (`f64`) and its exact derivatives (jets).
impl<S: Scalar> Equations<S> for Gear<S> {
    fn derivatives(&self, _t: f64, dx: &mut [S]) {
        let (s, dx) = (Gear::STATE.gear, &mut dx[..Gear::STATES]);
        dx[s.phi_b] = self.gear.w_b;
        dx[s.w_b] = self.acceleration_b();
    }

    fn outputs(&mut self, _t: f64) {
        let a_b = self.acceleration_b();
        let g = &mut self.gear;
        g.a_b = a_b;
        g.a_a = g.ratio * a_b;
        g.phi_a = g.ratio * g.phi_b;
        g.w_a = g.ratio * g.w_b;
        // J_a a_a = tau_a + tau_mesh
        self.tau_mesh = g.j_a * g.a_a - g.tau_a;
        // The inner ideal gear's cut torques: t = -tau_mesh at flange a, -ratio t at flange b;
        // the support takes the rest, -(t - ratio t).
        self.tau_support = (S::constant(1.0) - g.ratio) * self.tau_mesh;
        self.power_loss = S::constant(0.0);
    }

    /// J_reflected = J_b + ratio^2 J_a.
    fn calculated(&mut self, _t: f64) {
        let g = &self.gear;
        self.j_reflected = g.j_b + g.ratio * g.ratio * g.j_a;
    }
}

impl Model for Gear {
    const NAME: &'static str = "Gear";
    const DESCRIPTION: &'static str =
        "Ideal gear phi_a = ratio*phi_b carrying the inertias of both flanges, driven by external torques";
    const DOCUMENTATION: &'static str = include_str!("../documentation.html");
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(2.0);

    fn initialize(&mut self, t: f64) -> Result<(), Invalid> {
        self.gear.reflected_inertia()?;
        self.calculated(t);
        Ok(())
    }

    type Jets = Gear<Jet<2>>;
}

export_fmu!(Gear);
