//! One FMU instance: the FMI 2.0 Co-Simulation state machine around a model.
//!
//! Two kinds of failure are told apart:
//! - a *rejected call* (illegal in this state, bad arguments, a NaN or out-of-range value):
//!   fmi2Error is returned, the reason is logged, and nothing changes, so the instance can go on;
//! - a *failed computation* (invalid parameters at initialization, inputs the model refuses at a
//!   step, a solver failure): fmi2Error is returned and the instance enters the Error state,
//!   from which fmi2SetFMUstate, fmi2Reset or fmi2FreeInstance continue. The model keeps the
//!   values it had before the failing call.

use crate::describe::guid;
use crate::integrator::{self, Integrator, StepError};
use crate::logger::{Category, Logger, Status, OK};
use crate::model::Model;
use crate::snapshot::Snapshot;
use crate::variables::{Access, Causality, Phase, Var};

/// The states of the FMI 2.0 Co-Simulation state machine (fmi2StepInProgress never occurs:
/// doStep is synchronous).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FmiState {
    Instantiated = 0,
    InitializationMode = 1,
    StepComplete = 2,
    StepFailed = 3,
    StepCanceled = 4,
    Terminated = 5,
    Error = 6,
    Fatal = 7,
}

impl FmiState {
    /// A state an FMU state may hold (never Fatal).
    fn from_u8(x: u8) -> Option<Self> {
        allowed::ANY_BUT_FATAL
            .iter()
            .copied()
            .find(|s| *s as u8 == x)
    }
}

/// Sets of states in which a call is allowed.
pub mod allowed {
    use super::FmiState::{self, *};
    pub const ANY_BUT_FATAL: &[FmiState] = &[
        Instantiated,
        InitializationMode,
        StepComplete,
        StepFailed,
        StepCanceled,
        Terminated,
        Error,
    ];
    pub const INSTANTIATED: &[FmiState] = &[Instantiated];
    pub const INITIALIZATION: &[FmiState] = &[InitializationMode];
    pub const STEP_COMPLETE: &[FmiState] = &[StepComplete];
    pub const TERMINATE: &[FmiState] = &[StepComplete, StepFailed];
    pub const GET: &[FmiState] = &[
        InitializationMode,
        StepComplete,
        StepFailed,
        StepCanceled,
        Terminated,
        Error,
    ];
    pub const SET: &[FmiState] = &[Instantiated, InitializationMode, StepComplete];
    pub const STATUS: &[FmiState] = &[StepComplete, StepFailed, Terminated];
}

/// Result of an instance method: the status to return, the reason already formatted.
pub type CallResult = Result<Status, String>;

pub struct Instance<M: Model> {
    pub logger: Logger,
    pub state: FmiState,
    guid: String,
    vars: Vec<Var<M>>,
    model: M,
    time: f64,
    start_time: f64,
    stop_time: Option<f64>,
    tolerance: f64,
    last_successful_time: f64,
    /// Input derivatives set by the master, by value reference.
    slopes: Vec<f64>,
    /// Outputs must be recomputed before they are read (an input or parameter changed).
    dirty: bool,
    /// Built for the tolerance in force, when first needed.
    integrator: Option<Integrator<M>>,
    /// The solver's next trial step (NaN before the first step): part of the FMU state.
    step_size: f64,
}

impl<M: Model> Instance<M> {
    pub fn new(logger: Logger) -> Self {
        let vars = M::variables();
        let n = vars.len();
        Instance {
            logger,
            state: FmiState::Instantiated,
            guid: guid::<M>(),
            vars,
            model: M::default(),
            time: 0.0,
            start_time: 0.0,
            stop_time: None,
            tolerance: M::DEFAULT_EXPERIMENT.tolerance,
            last_successful_time: 0.0,
            slopes: vec![0.0; n],
            dirty: true,
            integrator: None,
            step_size: f64::NAN,
        }
    }

    pub fn guid(&self) -> &str {
        &self.guid
    }

    pub fn reset(&mut self) {
        self.state = FmiState::Instantiated;
        self.model = M::default();
        self.time = 0.0;
        self.start_time = 0.0;
        self.stop_time = None;
        self.tolerance = M::DEFAULT_EXPERIMENT.tolerance;
        self.last_successful_time = 0.0;
        self.slopes.iter_mut().for_each(|s| *s = 0.0);
        self.dirty = true;
        self.step_size = f64::NAN;
    }

    /// The integrator for the current tolerance, built (it allocates) only when that changed.
    fn integrator(&mut self) -> Result<&mut Integrator<M>, String> {
        let tolerance = self.tolerance;
        if self.integrator.as_ref().map(Integrator::rtol) != Some(tolerance) {
            self.integrator = Some(Integrator::new(tolerance)?);
        }
        Ok(self.integrator.as_mut().expect("built above"))
    }

    pub fn log_event(&self, message: &str) {
        self.logger.log(OK, Category::Events, message);
    }

    /// Checks that `function` may be called in the current state.
    pub fn check_state(&self, function: &str, states: &[FmiState]) -> Result<(), String> {
        if states.contains(&self.state) {
            Ok(())
        } else {
            Err(format!(
                "{function} is not allowed in state {:?}",
                self.state
            ))
        }
    }

    /// A failed computation: enter the Error state.
    fn failed(&mut self, message: String) -> CallResult {
        self.state = FmiState::Error;
        Err(message)
    }

    pub fn setup_experiment(
        &mut self,
        tolerance: Option<f64>,
        start: f64,
        stop: Option<f64>,
    ) -> CallResult {
        if let Some(tol) = tolerance {
            if !(tol.is_finite() && tol > 0.0 && tol < 1.0) {
                return Err(format!("tolerance = {tol} must be in (0, 1)"));
            }
        }
        if !start.is_finite() {
            return Err(format!("startTime = {start} is not finite"));
        }
        if let Some(stop) = stop {
            if !(stop.is_finite() && stop >= start) {
                return Err(format!(
                    "stopTime = {stop} must be finite and >= startTime = {start}"
                ));
            }
        }
        self.tolerance = tolerance.unwrap_or(M::DEFAULT_EXPERIMENT.tolerance);
        self.start_time = start;
        self.time = start;
        self.last_successful_time = start;
        self.stop_time = stop;
        Ok(OK)
    }

    pub fn enter_initialization_mode(&mut self) -> CallResult {
        self.state = FmiState::InitializationMode;
        self.dirty = true;
        Ok(OK)
    }

    /// Checks the parameters, sets the initial states and modes, computes the outputs.
    fn initialize(&mut self) -> Result<(), String> {
        let t = self.time;
        self.model
            .initialize()
            .map_err(|e| format!("t = {t}: {e}"))?;
        integrator::event_iteration(&mut self.model, t).map_err(|e| step_error_text(&e))?;
        self.model.update_outputs(t);
        self.dirty = false;
        Ok(())
    }

    pub fn exit_initialization_mode(&mut self) -> CallResult {
        let before = self.model.clone();
        if let Err(e) = self.initialize() {
            self.model = before;
            return self.failed(format!("initialization failed: {e}"));
        }
        // Built now, so that stepping allocates nothing.
        if let Err(e) = self.integrator() {
            return self.failed(format!("initialization failed: the integrator: {e}"));
        }
        self.state = FmiState::StepComplete;
        Ok(OK)
    }

    /// Recomputes outputs that depend on values set since the last computation.
    fn refresh(&mut self) -> Result<(), String> {
        // In the Error state the model may never have been initialized: report what it holds.
        if !self.dirty || self.state == FmiState::Error {
            return Ok(());
        }
        if self.state == FmiState::InitializationMode {
            // Initial values follow from the parameters set so far; a failure leaves them as they were.
            let before = self.model.clone();
            let result = self.initialize();
            if result.is_err() {
                self.model = before;
            }
            return result;
        }
        self.model.update_outputs(self.time);
        self.dirty = false;
        Ok(())
    }

    fn var(&self, vr: u32) -> Result<&Var<M>, String> {
        self.vars
            .get(vr as usize)
            .ok_or_else(|| format!("unknown value reference {vr}"))
    }

    pub fn get_real(&mut self, vrs: &[u32], values: &mut [f64]) -> CallResult {
        self.refresh()?;
        for (vr, value) in vrs.iter().zip(values.iter_mut()) {
            match &self.var(*vr)?.access {
                Access::Real { get, .. } => *value = get(&self.model),
                _ => return Err(format!("value reference {vr} is not a Real")),
            }
        }
        Ok(OK)
    }

    pub fn get_integer(&mut self, vrs: &[u32], values: &mut [i32]) -> CallResult {
        self.refresh()?;
        for (vr, value) in vrs.iter().zip(values.iter_mut()) {
            match &self.var(*vr)?.access {
                Access::Integer { get, .. } => *value = get(&self.model),
                _ => return Err(format!("value reference {vr} is not an Integer")),
            }
        }
        Ok(OK)
    }

    /// First time derivatives of Real outputs at the current time (`fmi2GetRealOutputDerivatives`,
    /// order 1): a central difference along the model's own motion, the states moved by
    /// `±δ dx/dt` and the inputs by `±δ du/dt`, with δ a thousandth of the integrator's step
    /// (it follows the fastest motion the tolerance resolves) within [1e-9 s, 1e-5 s]. Outputs
    /// that are states get their derivative to rounding; others to about 1e-9 of their rate.
    pub fn get_output_derivatives(
        &mut self,
        vrs: &[u32],
        orders: &[i32],
        values: &mut [f64],
    ) -> CallResult {
        self.refresh()?;
        for (vr, order) in vrs.iter().zip(orders) {
            let v = self.var(*vr)?;
            if v.causality != Causality::Output || !v.is_real() {
                return Err(format!("{} (vr {vr}) is not a Real output", v.name));
            }
            if *order != 1 {
                return Err(format!(
                    "derivative order {order} of {} is not provided (maxOutputDerivativeOrder 1)",
                    v.name
                ));
            }
        }
        let t = self.time;
        let delta = if self.step_size.is_finite() {
            (1e-3 * self.step_size).clamp(1e-9, 1e-5)
        } else {
            1e-6
        };
        let (mut x, mut dx) = (vec![0.0; M::STATES], vec![0.0; M::STATES]);
        self.model.get_states(&mut x);
        self.model.derivatives(t, &mut dx);
        let moved = |sign: f64| {
            let mut m = self.model.clone();
            let y: Vec<f64> = x
                .iter()
                .zip(&dx)
                .map(|(x, d)| x + sign * delta * d)
                .collect();
            m.set_states(&y);
            for (v, slope) in self.vars.iter().zip(&self.slopes) {
                if let (Access::Real { get, set }, true) = (&v.access, *slope != 0.0) {
                    let u = get(&m);
                    set(&mut m, u + sign * delta * slope);
                }
            }
            m.update_outputs(t + sign * delta);
            m
        };
        let (ahead, behind) = (moved(1.0), moved(-1.0));
        for (vr, value) in vrs.iter().zip(values.iter_mut()) {
            if let Access::Real { get, .. } = self.vars[*vr as usize].access {
                *value = (get(&ahead) - get(&behind)) / (2.0 * delta);
            }
        }
        Ok(OK)
    }

    /// Checks that `value` may be written to `vr` now; the reason names the variable.
    fn check_set(&self, vr: u32, value: f64, real: bool) -> Result<&Var<M>, String> {
        let v = self.var(vr)?;
        let t = self.time;
        if v.is_real() != real {
            return Err(format!("{} (vr {vr}) has another type", v.name));
        }
        let phase = match self.state {
            FmiState::StepComplete => Phase::Stepping,
            _ => Phase::Initialization,
        };
        if !v.settable(phase) {
            return Err(format!(
                "{} is a {} {} variable and cannot be set in state {:?}",
                v.name,
                v.variability.as_str(),
                v.causality.as_str(),
                self.state
            ));
        }
        if !value.is_finite() {
            return Err(format!(
                "{} = {value} at t = {t} refused: not a finite number",
                v.name
            ));
        }
        if v.min.is_some_and(|min| value < min) || v.max.is_some_and(|max| value > max) {
            return Err(format!(
                "{} = {value} at t = {t} refused: outside its range [{}, {}]",
                v.name,
                v.min.unwrap_or(f64::NEG_INFINITY),
                v.max.unwrap_or(f64::INFINITY)
            ));
        }
        Ok(v)
    }

    pub fn set_real(&mut self, vrs: &[u32], values: &[f64]) -> CallResult {
        // All or nothing: check every value before writing any.
        for (vr, value) in vrs.iter().zip(values) {
            self.check_set(*vr, *value, true)?;
        }
        for (vr, value) in vrs.iter().zip(values) {
            if let Access::Real { set, .. } = self.vars[*vr as usize].access {
                set(&mut self.model, *value);
            }
        }
        self.dirty = true;
        Ok(OK)
    }

    pub fn set_integer(&mut self, vrs: &[u32], values: &[i32]) -> CallResult {
        for (vr, value) in vrs.iter().zip(values) {
            self.check_set(*vr, f64::from(*value), false)?;
        }
        for (vr, value) in vrs.iter().zip(values) {
            if let Access::Integer { set, .. } = self.vars[*vr as usize].access {
                set(&mut self.model, *value);
            }
        }
        self.dirty = true;
        Ok(OK)
    }

    /// First-order input derivatives, valid from the next communication point on until they
    /// are set again: the input follows `u + du/dt * (t - t_c)` over each step.
    pub fn set_input_derivatives(
        &mut self,
        vrs: &[u32],
        orders: &[i32],
        values: &[f64],
    ) -> CallResult {
        for ((vr, order), value) in vrs.iter().zip(orders).zip(values) {
            let v = self.var(*vr)?;
            if v.causality != Causality::Input || !v.is_real() {
                return Err(format!("{} is not a Real input", v.name));
            }
            if *order != 1 {
                return Err(format!(
                    "derivative order {order} for {} is not supported (maxOrder 1)",
                    v.name
                ));
            }
            if !value.is_finite() {
                return Err(format!(
                    "derivative of {} = {value} at t = {} refused: not finite",
                    v.name, self.time
                ));
            }
        }
        for (vr, value) in vrs.iter().zip(values) {
            self.slopes[*vr as usize] = *value;
        }
        Ok(OK)
    }

    pub fn do_step(&mut self, tc: f64, h: f64) -> CallResult {
        let t = self.time;
        let eps = 1e-9 * t.abs().max(1.0);
        if !(h.is_finite() && h > 0.0) {
            return Err(format!("communicationStepSize = {h} must be positive"));
        }
        if !tc.is_finite() || (tc - t).abs() > eps {
            return Err(format!(
                "currentCommunicationPoint = {tc} does not match the FMU time {t}"
            ));
        }
        let t_end = tc + h;
        if let Some(stop) = self.stop_time {
            if t_end > stop + eps {
                return Err(format!("a step to t = {t_end} passes the stop time {stop}"));
            }
        }
        if let Err(e) = self.model.check_inputs() {
            return self.failed(format!("t = {tc}: step refused: {e}"));
        }

        if let Err(e) = self.integrator() {
            return self.failed(format!("t = {tc}: the integrator: {e}"));
        }
        let integrator = self.integrator.as_mut().expect("built above");
        // Inputs with a derivative follow a ramp over the step.
        let model = &self.model;
        integrator.set_inputs(
            tc,
            self.vars
                .iter()
                .zip(&self.slopes)
                .filter(|(_, s)| **s != 0.0)
                .filter_map(|(v, s)| match v.access {
                    Access::Real { get, set } => Some((set, get(model), *s)),
                    _ => None,
                }),
        );
        let before = self.model.clone();
        if self.slopes.iter().any(|s| *s != 0.0) {
            // Inputs are linear over the step: valid at both ends means valid throughout.
            let mut end = before.clone();
            integrator.apply_inputs(&mut end, t_end);
            if let Err(e) = end.check_inputs() {
                return self.failed(format!(
                    "t = {tc}: step refused: with the input derivatives, at t = {t_end}: {e}"
                ));
            }
        }
        let logger = &self.logger;
        let mut log = |msg: &str| logger.log(OK, Category::Events, msg);
        let mut h = self.step_size;
        let result = integrator.integrate(&mut self.model, tc, t_end, &mut h, &mut log);
        if let Err(e) = result {
            self.model = before;
            return self.failed(format!(
                "step from t = {tc} failed: {}",
                step_error_text(&e)
            ));
        }
        integrator.apply_inputs(&mut self.model, t_end);
        self.step_size = h;
        self.model.update_outputs(t_end);
        self.dirty = false;
        self.time = t_end;
        self.last_successful_time = t_end;
        Ok(OK)
    }

    pub fn terminate(&mut self) -> CallResult {
        self.state = FmiState::Terminated;
        Ok(OK)
    }

    pub fn last_successful_time(&self) -> f64 {
        self.last_successful_time
    }

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
        let mut model = M::default();
        for (v, x) in self.vars.iter().zip(&s.values) {
            match v.access {
                Access::Real { set, .. } => set(&mut model, *x),
                Access::Integer { set, .. } => {
                    if x.fract() != 0.0 || x.abs() > f64::from(i32::MAX) {
                        return Err(format!("FMU state holds {} = {x}, not an integer", v.name));
                    }
                    set(&mut model, *x as i32)
                }
            }
        }
        Ok((model, state, s))
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
        if self.state == FmiState::StepComplete {
            // A state with another tolerance: rebuilt here, not in the next step. Should that
            // fail, the next step reports it.
            let _ = self.integrator();
        }
        Ok(())
    }
}

fn step_error_text(e: &StepError) -> String {
    match e {
        StepError::Invalid(t, inv) => format!("t = {t}: {inv}"),
        StepError::Solver(t, msg) => format!("t = {t}: {msg}"),
    }
}
