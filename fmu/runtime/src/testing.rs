//! A model run in its own process, for physics tests in a component crate: the same state
//! machine and integrator as behind the C ABI, driven by variable names, without packaging.
//!
//! ```ignore
//! let mut run = Run::<Gear>::co_simulation(&[("ratio", 3.0)])?;
//! run.set("tau_a", 1.0)?;
//! run.step(1e-3)?;
//! let w = run.get("w_b")?;
//! ```

use crate::instance::{Instance, Interface};
use crate::logger::Logger;
use crate::model::Model;
use crate::variables::Access;

mod jacobian;
pub use jacobian::Disagreement;

/// A Co-Simulation instance of `M`, initialized, at time `time()`.
pub struct Run<M: Model> {
    instance: Instance<M>,
    time: f64,
}

impl<M: Model> Run<M> {
    /// Instantiated, the parameters set, initialized at t = 0 with the default tolerance.
    pub fn co_simulation(parameters: &[(&str, f64)]) -> Result<Self, String> {
        let logger = Logger::new(None, std::ptr::null_mut(), M::NAME, false);
        let mut run = Run {
            instance: Instance::new(logger, Interface::CoSimulation),
            time: 0.0,
        };
        run.instance.setup_experiment(None, 0.0, None)?;
        for (name, value) in parameters {
            run.set(name, *value)?;
        }
        run.instance.enter_initialization_mode();
        run.instance.exit_initialization_mode()?;
        Ok(run)
    }

    fn reference(&self, name: &str) -> Result<(u32, bool), String> {
        let vars = &self.instance.vars;
        let vr = vars
            .iter()
            .position(|v| v.name == name)
            .ok_or_else(|| format!("{} has no variable {name}", M::NAME))?;
        Ok((vr as u32, matches!(vars[vr].access, Access::Integer { .. })))
    }

    /// Sets a Real or Integer variable (an Integer from a whole number).
    pub fn set(&mut self, name: &str, value: f64) -> Result<(), String> {
        let (vr, integer) = self.reference(name)?;
        if integer {
            self.instance.set_integer(&[vr], &[value as i32])?;
        } else {
            self.instance.set_real(&[vr], &[value])?;
        }
        Ok(())
    }

    /// Reads a Real or Integer variable.
    pub fn get(&mut self, name: &str) -> Result<f64, String> {
        let (vr, integer) = self.reference(name)?;
        if integer {
            let mut v = [0];
            self.instance.get_integer(&[vr], &mut v)?;
            Ok(f64::from(v[0]))
        } else {
            let mut v = [0.0];
            self.instance.get_real(&[vr], &mut v)?;
            Ok(v[0])
        }
    }

    /// One communication step of `h`.
    pub fn step(&mut self, h: f64) -> Result<(), String> {
        self.instance.do_step(self.time, h)?;
        self.time += h;
        Ok(())
    }

    pub fn time(&self) -> f64 {
        self.time
    }

    /// The model as the integrator sees it now, for what no variable shows (`stiff()`, say).
    pub fn model(&self) -> &M {
        &self.instance.model
    }
}

/// Whether a step checks `M`'s outputs from its fields (the derive's sum, which matches the
/// variable table) rather than through the getters: what every component should do.
pub fn outputs_checked_by_fields<M: Model>() -> bool {
    matches!(
        crate::instance::setters::OutputCheck::<M>::new(&M::variables()),
        crate::instance::setters::OutputCheck::Fields
    )
}
