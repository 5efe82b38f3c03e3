//! Small models with known solutions, for the runtime's own unit tests.

use crate::model::{Experiment, Indicators, Invalid, Model, Side, HYSTERESIS};
use crate::variables::Var;

/// A ball dropped from h0 that bounces with restitution e: state events with exact times.
#[derive(Default, Clone)]
pub struct Ball {
    pub h: f64,
    pub v: f64,
    pub bounces: i32,
}

pub const G: f64 = 9.81;
pub const E: f64 = 0.5;

impl Model for Ball {
    const NAME: &'static str = "Ball";
    const DESCRIPTION: &'static str = "";
    const DOCUMENTATION: &'static str = "";
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0);
    const STATES: usize = 2;
    const EVENT_INDICATORS: usize = 1;
    fn variables() -> Vec<Var<Self>> {
        vec![]
    }
    fn initialize(&mut self) -> Result<(), Invalid> {
        Ok(())
    }
    fn get_states(&self, x: &mut [f64]) {
        x.copy_from_slice(&[self.h, self.v]);
    }
    fn set_states(&mut self, x: &[f64]) {
        (self.h, self.v) = (x[0], x[1]);
    }
    fn derivatives(&self, _t: f64, dx: &mut [f64]) {
        dx.copy_from_slice(&[self.v, -G]);
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
    fn update_outputs(&mut self, _t: f64) {}
}
