//! Small models with known solutions, for the runtime's own unit tests.

use crate::model::{Experiment, Indicators, Invalid, Model, Side, HYSTERESIS};

/// A ball dropped from h0 that bounces with restitution e: state events with exact times.
#[derive(Default, Clone)]
pub struct Ball {
    pub h: f64,
    pub v: f64,
    pub bounces: i32,
    /// Integrated by BDF, as a stiff model is.
    pub stiff: bool,
}

pub const G: f64 = 9.81;
pub const E: f64 = 0.5;

crate::test_states!(Ball; h, v);

impl crate::lift::Equations<f64> for Ball {
    fn derivatives(&self, _t: f64, dx: &mut [f64]) {
        dx.copy_from_slice(&[self.v, -G]);
    }
    fn outputs(&mut self, _t: f64) {}
}

impl Model for Ball {
    const NAME: &'static str = "Ball";
    const DESCRIPTION: &'static str = "";
    const DOCUMENTATION: &'static str = "";
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0);
    const EVENT_INDICATORS: usize = 1;
    fn stiff(&self) -> bool {
        self.stiff
    }
    fn initialize(&mut self, _t: f64) -> Result<(), Invalid> {
        Ok(())
    }
    fn event_indicators(&self, _t: f64, z: &mut Indicators) {
        // Above the ground until it bounces.
        z.set(0, self.h, Side::Positive, HYSTERESIS);
    }
    fn event_update(&mut self, _t: f64) -> Result<bool, Invalid> {
        if self.h <= 0.0 && self.v < 0.0 {
            self.h = 0.0;
            self.v *= -E;
            self.bounces += 1;
            return Ok(true);
        }
        Ok(false)
    }
    type Jets = crate::lift::Unlifted;
}

/// `test_states!(Ball; h, v)`: a test model with no variable table whose states are the fields
/// listed, in that order.
#[macro_export]
#[doc(hidden)]
macro_rules! test_states {
    ($model:ty; $($field:ident),*) => {
        impl $crate::declare::Variables for $model {
            const STATES: usize = <[&str]>::len(&[$(stringify!($field)),*]);
            const ANGLES: u64 = 0;
            type StateIndex = ();
            fn declare<L: $crate::declare::Lens<Inner = Self>>(_: &mut Vec<$crate::Var<L::Outer>>) {}
            #[allow(unused_assignments, unused_mut, unused_variables)]
            fn get_states(&self, x: &mut [f64]) {
                let mut i = 0;
                $(x[i] = self.$field; i += 1;)*
            }
            #[allow(unused_assignments, unused_mut, unused_variables)]
            fn set_states(&mut self, x: &[f64]) {
                let mut i = 0;
                $(self.$field = x[i]; i += 1;)*
            }
            fn start_states(&mut self) {}
        }
    };
}
