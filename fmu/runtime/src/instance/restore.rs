//! An instance's FMU state: taken as bytes ([`super::snapshot`]), and restored only after it
//! is checked like the calls that could have made it. The bytes may come from another process
//! or tool with a correct checksum and values no set call would accept, so each variable is
//! checked against its type and declared range, and an initialized state against the model's
//! initialization (on a copy), its calculated parameters, its inputs and its own
//! [`Model::check_state`]. The checks run when a state is set, never per step.

use super::snapshot::Snapshot;
use super::{FmiState, Instance, Interface};
use crate::model::Model;
use crate::variables::{Access, Causality};

impl<M: Model> Instance<M> {
    pub fn snapshot(&self) -> Vec<u8> {
        let s = Snapshot {
            fmi_state: self.state as u8,
            time: self.time,
            start_time: self.start_time,
            stop_time: self.stop_time,
            tolerance: self.tolerance,
            last_successful_time: self.last_successful_time,
            step_size: self.step_size,
            values: self.vars.iter().map(|v| v.value(&self.model)).collect(),
            slopes: self.slopes.clone(),
        };
        s.encode(&self.guid)
    }

    /// Parses and checks a serialized FMU state completely, without applying it.
    pub fn check_snapshot(&self, bytes: &[u8]) -> Result<(M, FmiState, Snapshot), String> {
        let s = Snapshot::decode(bytes, &self.guid, self.vars.len())?;
        let state = FmiState::from_u8(s.fmi_state)
            .ok_or_else(|| format!("FMU state holds an invalid FMI state {}", s.fmi_state))?;
        let event_mode_here = state == FmiState::EventMode && self.event_mode_used;
        if state.interface().is_some_and(|i| i != self.interface) && !event_mode_here {
            return Err(format!(
                "the FMU state was taken in {state:?}, a state of {}; this instance is {}",
                state.interface().map_or("", Interface::name),
                self.interface.name()
            ));
        }
        let mut model = M::default();
        // A Real that starts undefined (NaN) may still be: a time of a last event that has not
        // happened.
        let undefined = M::default();
        let t = s.time;
        for (v, x) in self.vars.iter().zip(&s.values) {
            let refused = |reason: String| {
                format!(
                    "FMU state refused: it holds {} = {x} at t = {t}, {reason}",
                    v.name
                )
            };
            match v.access {
                Access::Real { set, .. } => {
                    if !x.is_finite() && v.value(&undefined).is_finite() {
                        return Err(refused("not a finite number".into()));
                    }
                    set(&mut model, *x)
                }
                Access::Integer { set, .. } => {
                    if x.fract() != 0.0 || x.abs() > f64::from(i32::MAX) {
                        return Err(refused("not an integer".into()));
                    }
                    set(&mut model, *x as i32)
                }
            }
            if let Some(reason) = v.range_violation(*x) {
                return Err(refused(reason));
            }
        }
        if state.initialized() {
            self.check_initialized(&model)
                .map_err(|e| format!("FMU state refused at t = {t}: {e}"))?;
        }
        Ok((model, state, s))
    }

    /// What an initialized model must satisfy besides each variable's range: its parameters
    /// pass the initialization's checks and give the calculated parameters it holds, its
    /// inputs pass the step's checks, and its modes and counts are ones it can reach.
    fn check_initialized(&self, model: &M) -> Result<(), String> {
        let mut fresh = model.clone();
        fresh.start_states();
        fresh
            .initialize(self.start_time)
            .map_err(|e| format!("its parameters fail the initialization: {e}"))?;
        for v in self
            .vars
            .iter()
            .filter(|v| v.causality == Causality::CalculatedParameter)
        {
            let (held, derived) = (v.value(model), v.value(&fresh));
            if held.to_bits() != derived.to_bits() {
                return Err(format!(
                    "it holds the calculated parameter {} = {held}, but its parameters give {derived}",
                    v.name
                ));
            }
        }
        model.check_inputs().map_err(|e| e.to_string())?;
        model.check_state().map_err(|e| e.to_string())
    }

    /// Restores a state; nothing changes unless it is valid.
    pub fn restore(&mut self, bytes: &[u8]) -> Result<(), String> {
        let (model, state, s) = self.check_snapshot(bytes)?;
        self.model = model;
        self.state = state;
        self.time = s.time;
        self.start_time = s.start_time;
        self.stop_time = s.stop_time;
        self.tolerance = s.tolerance;
        self.last_successful_time = s.last_successful_time;
        self.step_size = s.step_size;
        self.slopes = s.slopes;
        self.dirty = true;
        self.untouched = false;
        self.jacobian.changed();
        if self.state == FmiState::StepComplete {
            // A state with another tolerance: rebuilt here, not in the next step.
            self.integrator();
        }
        Ok(())
    }
}
