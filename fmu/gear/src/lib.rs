//! Ideal gear with the inertias rigidly attached to its two flanges.
//!
//! Equations and derivation: `documentation.html` next to this file (it ships in the FMU).

use fmu_runtime::{export_fmu, Dual, Experiment, Invalid, Model, Scalar, Variables};
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

/// The gear's equations, once for the simulation (`f64`) and its exact derivatives (`Dual`).
struct Motion<S> {
    a_b: S,
    phi_a: S,
    w_a: S,
    a_a: S,
    tau_mesh: S,
    tau_support: S,
}

/// The knowns the equations read.
#[derive(Clone, Copy)]
struct Knowns<S> {
    ratio: S,
    j_a: S,
    j_reflected: S,
    phi_b: S,
    w_b: S,
    tau_a: S,
    tau_b: S,
}

impl<S: Scalar> Knowns<S> {
    /// Acceleration of the b side: (J_b + ratio^2 J_a) a_b = tau_b + ratio tau_a.
    fn acceleration_b(&self) -> S {
        (self.tau_b + self.ratio * self.tau_a) / self.j_reflected
    }

    fn motion(&self) -> Motion<S> {
        let a_b = self.acceleration_b();
        let a_a = self.ratio * a_b;
        // J_a a_a = tau_a + tau_mesh
        let tau_mesh = self.j_a * a_a - self.tau_a;
        Motion {
            a_b,
            phi_a: self.ratio * self.phi_b,
            w_a: self.ratio * self.w_b,
            a_a,
            tau_mesh,
            // The inner ideal gear's cut torques: t = -tau_mesh at flange a, -ratio t at
            // flange b; the support takes the rest, -(t - ratio t).
            tau_support: (S::constant(1.0) - self.ratio) * tau_mesh,
        }
    }
}

impl Gear {
    fn knowns(&self) -> Knowns<f64> {
        let g = &self.gear;
        Knowns {
            ratio: g.ratio,
            j_a: g.j_a,
            j_reflected: self.j_reflected,
            phi_b: g.phi_b,
            w_b: g.w_b,
            tau_a: g.tau_a,
            tau_b: g.tau_b,
        }
    }

    fn acceleration_b(&self) -> f64 {
        self.knowns().acceleration_b()
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
        let m = self.knowns().motion();
        let g = &mut self.gear;
        (g.a_b, g.phi_a, g.w_a, g.a_a) = (m.a_b, m.phi_a, m.w_a, m.a_a);
        (self.tau_mesh, self.tau_support) = (m.tau_mesh, m.tau_support);
        self.power_loss = 0.0;
    }

    const PROVIDES_DERIVATIVES: bool = true;

    /// The same equations in dual numbers. J_reflected = J_b + ratio^2 J_a is computed again
    /// from its parameters, so that in Initialization Mode it moves with them.
    fn tangent(&self, _t: f64, seed: &Self, tangent: &mut Self) {
        let (g, d) = (&self.gear, &seed.gear);
        let dual = Dual::seeded;
        let (ratio, j_a, j_b) = (
            dual(g.ratio, d.ratio),
            dual(g.j_a, d.j_a),
            dual(g.j_b, d.j_b),
        );
        let j_reflected = j_b + ratio * ratio * j_a;
        let k = Knowns {
            ratio,
            j_a,
            j_reflected,
            phi_b: dual(g.phi_b, d.phi_b),
            w_b: dual(g.w_b, d.w_b),
            tau_a: dual(g.tau_a, d.tau_a),
            tau_b: dual(g.tau_b, d.tau_b),
        };
        let m = k.motion();
        let t = &mut tangent.gear;
        (t.a_b, t.phi_a, t.w_a, t.a_a) = (m.a_b.eps, m.phi_a.eps, m.w_a.eps, m.a_a.eps);
        (tangent.tau_mesh, tangent.tau_support) = (m.tau_mesh.eps, m.tau_support.eps);
        tangent.j_reflected = j_reflected.eps;
        tangent.power_loss = 0.0;
    }
}

export_fmu!(Gear);
