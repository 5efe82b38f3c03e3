//! The instance core both FMI versions share: one FMU instance, the state machine around a
//! model (life cycle, get and set, FMU state), which the FMI 2.0 and FMI 3.0 C ABIs
//! ([`crate::fmi2`], [`crate::fmi3`]) translate their calls to. A Co-Simulation instance integrates the model itself
//! ([`co_simulation`]); a Model Exchange instance hands states, derivatives and event
//! indicators to the importer's solver and runs the model's event update when the importer asks
//! ([`model_exchange`]).
//!
//! Two kinds of failure are told apart:
//! - a *rejected call* (illegal in this state, bad arguments, a NaN or out-of-range value):
//!   fmi2Error is returned, the reason is logged, and nothing changes, so the instance can go on;
//! - a *failed computation* (invalid parameters at initialization, inputs the model refuses at a
//!   step, a solver failure): fmi2Error is returned and the instance enters the Error state,
//!   from which fmi2SetFMUstate, fmi2Reset or fmi2FreeInstance continue. The model keeps the
//!   values it had before the failing call.

use crate::logger::{Category, Logger, Status, DISCARD, OK};
use setters::{setters, OutputCheck, Setter};

pub(crate) mod call;
pub mod co_simulation;
pub mod derivatives;
mod input_motion;
pub(crate) mod jacobian;
pub(crate) mod places;
pub(crate) use input_motion::InputMotion;
#[cfg(test)]
mod jacobian_tests;
pub mod model_exchange;
pub mod restore;
pub(crate) mod setters;
pub mod snapshot;
mod sweep;
use crate::describe::guid;
use crate::model::Model;
use crate::ode::{self as integrator, Integrator, StepError};
use crate::variables::{Access, Causality, Phase, Var};

/// The states of the FMI state machines that an instance can be in: Co-Simulation's
/// StepComplete (FMI 3.0: Step Mode), Model Exchange's EventMode (also FMI 3.0 Co-Simulation's)
/// and ContinuousTimeMode, and the states both share. FMI 2.0's StepInProgress, StepFailed and
/// StepCanceled never occur: doStep is synchronous and cannot be canceled, and a step that
/// fails enters Error. The numbers are those an FMU state stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FmiState {
    Instantiated = 0,
    InitializationMode = 1,
    StepComplete = 2,
    Terminated = 5,
    Error = 6,
    Fatal = 7,
    EventMode = 8,
    ContinuousTimeMode = 9,
}

impl FmiState {
    /// A state an FMU state may hold (never Fatal).
    pub(crate) fn from_u8(x: u8) -> Option<Self> {
        allowed::ANY_BUT_FATAL
            .iter()
            .copied()
            .find(|s| *s as u8 == x)
    }

    /// Whether the model has been initialized in this state: its parameters are checked and
    /// its modes set.
    pub(crate) fn initialized(self) -> bool {
        !matches!(
            self,
            FmiState::Instantiated | FmiState::InitializationMode | FmiState::Error
        )
    }

    /// The interface whose state machine has this state, if only one has it.
    pub(crate) fn interface(self) -> Option<Interface> {
        match self {
            FmiState::StepComplete => Some(Interface::CoSimulation),
            FmiState::EventMode | FmiState::ContinuousTimeMode => Some(Interface::ModelExchange),
            _ => None,
        }
    }
}

/// The interface an instance was created for (`fmuType` of fmi2Instantiate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interface {
    ModelExchange,
    CoSimulation,
}

impl Interface {
    pub fn name(self) -> &'static str {
        match self {
            Interface::ModelExchange => "Model Exchange",
            Interface::CoSimulation => "Co-Simulation",
        }
    }
}

/// What one event update reports, in either version (FMI 2.0: `fmi2EventInfo` of
/// `fmi2NewDiscreteStates`; FMI 3.0: the arguments of `fmi3UpdateDiscreteStates`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EventUpdate {
    pub new_discrete_states_needed: bool,
    pub terminate_simulation: bool,
    pub nominals_changed: bool,
    pub values_of_continuous_states_changed: bool,
    pub next_event_time: Option<f64>,
}

/// Sets of states in which a call is allowed.
pub mod allowed {
    use super::FmiState::{self, *};
    pub const ANY_BUT_FATAL: &[FmiState] = &[
        Instantiated,
        InitializationMode,
        StepComplete,
        Terminated,
        Error,
        EventMode,
        ContinuousTimeMode,
    ];
    pub const INSTANTIATED: &[FmiState] = &[Instantiated];
    pub const INITIALIZATION: &[FmiState] = &[InitializationMode];
    pub const STEP_COMPLETE: &[FmiState] = &[StepComplete];
    pub const TERMINATE: &[FmiState] = &[StepComplete, EventMode, ContinuousTimeMode];
    pub const GET: &[FmiState] = &[
        InitializationMode,
        StepComplete,
        Terminated,
        Error,
        EventMode,
        ContinuousTimeMode,
    ];
    pub const SET: &[FmiState] = &[
        Instantiated,
        InitializationMode,
        StepComplete,
        EventMode,
        ContinuousTimeMode,
    ];
    pub const STATUS: &[FmiState] = &[StepComplete, Terminated];
    /// Directional and adjoint derivatives.
    pub const DERIVATIVES: &[FmiState] = &[
        InitializationMode,
        StepComplete,
        EventMode,
        ContinuousTimeMode,
        Terminated,
    ];
    // Model Exchange.
    pub const EVENT_MODE: &[FmiState] = &[EventMode];
    pub const CONTINUOUS_TIME_MODE: &[FmiState] = &[ContinuousTimeMode];
    pub const SET_TIME: &[FmiState] = &[EventMode, ContinuousTimeMode];
    pub const ENTER_EVENT_MODE: &[FmiState] = &[EventMode, ContinuousTimeMode];
    pub const SET_STATES: &[FmiState] = &[ContinuousTimeMode];
    pub const GET_STATES: &[FmiState] = &[
        InitializationMode,
        EventMode,
        ContinuousTimeMode,
        Terminated,
        Error,
    ];
}

/// Result of an instance method: the status to return, the reason already formatted.
pub type CallResult = Result<Status, String>;

pub struct Instance<M: Model> {
    pub logger: Logger,
    pub state: FmiState,
    pub interface: Interface,
    pub(crate) guid: String,
    pub(crate) vars: Vec<Var<M>>,
    pub(crate) model: M,
    pub(crate) time: f64,
    pub(crate) start_time: f64,
    pub(crate) stop_time: Option<f64>,
    pub(crate) tolerance: f64,
    pub(crate) last_successful_time: f64,
    /// Input derivatives set by the master, by value reference.
    pub(crate) slopes: Vec<f64>,
    /// Outputs must be recomputed before they are read (an input or parameter changed).
    pub(crate) dirty: bool,
    /// Co-Simulation: nothing changed since the last step ended where it was asked to (no
    /// value set, no event, no FMU state restored), so the next step's integration may go on
    /// with the BDF's order and history.
    pub(crate) untouched: bool,
    /// Built for the tolerance in force, when first needed.
    pub(crate) integrator: Option<Integrator<M>>,
    /// The solver's next trial step (NaN before the first step): part of the FMU state.
    pub(crate) step_size: f64,
    /// Model Exchange: event updates that changed something since the importer entered Event
    /// Mode, against a chattering model.
    pub(crate) event_updates: usize,
    /// Model Exchange: the states last set lie outside the model's domain.
    pub(crate) outside: bool,
    /// Model Exchange: room for the derivatives that tell that, and for the event indicators'
    /// sides and rates (two of each), so that no call allocates.
    pub(crate) scratch: Vec<f64>,
    /// The states before and after an event update: whether it moved them, without allocating.
    pub(crate) event_states: Vec<f64>,
    /// Model Exchange: each Real input's last time and value set in Continuous-Time Mode, and
    /// its rate between the last two times (an importer gives no input derivatives there).
    pub(crate) input_motion: Vec<InputMotion>,
    /// Co-Simulation has an Event Mode (FMI 3.0 with `eventModeUsed`): the instance enters it
    /// after initialization and at events, and an FMU state taken there may be restored.
    pub(crate) event_mode_used: bool,
    /// What set calls check, by value reference.
    setters: Vec<Setter<M>>,
    /// Every Real output must be finite after a step.
    output_check: OutputCheck<M>,
    /// Why the outputs computed for the values set last are not finite (getters refuse them
    /// until a value changes).
    pub(crate) unrepresentable: Option<String>,
    /// The exact Jacobian's columns at the current point.
    pub(crate) jacobian: jacobian::Jacobian<M>,
}

impl<M: Model> Instance<M> {
    pub fn new(logger: Logger, interface: Interface) -> Self {
        let vars = M::variables();
        let n = vars.len();
        let model = M::default();
        Instance {
            jacobian: jacobian::Jacobian::new(&model, &vars),
            setters: setters(&vars),
            output_check: OutputCheck::new(&vars),
            logger,
            state: FmiState::Instantiated,
            interface,
            guid: guid::<M>(),
            vars,
            model,
            time: 0.0,
            start_time: 0.0,
            stop_time: None,
            tolerance: M::DEFAULT_EXPERIMENT.tolerance,
            last_successful_time: 0.0,
            slopes: vec![0.0; n],
            dirty: true,
            untouched: false,
            integrator: None,
            step_size: f64::NAN,
            event_updates: 0,
            outside: false,
            scratch: vec![0.0; 2 * (M::STATES + M::EVENT_INDICATORS)],
            event_states: vec![0.0; 2 * M::STATES],
            input_motion: vec![InputMotion::default(); n],
            event_mode_used: false,
            unrepresentable: None,
        }
    }

    /// An FMI 3.0 instance: its FMU states are its own (an FMI 2.0 state is refused, by its
    /// GUID), and a Co-Simulation instance may use Event Mode.
    pub(crate) fn fmi3(logger: Logger, interface: Interface, event_mode_used: bool) -> Self {
        let mut core = Self::new(logger, interface);
        core.guid = format!("{} FMI 3.0", core.guid);
        core.event_mode_used = event_mode_used && interface == Interface::CoSimulation;
        core
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
        self.untouched = false;
        self.jacobian.changed();
        self.step_size = f64::NAN;
        self.event_updates = 0;
        self.outside = false;
        self.unrepresentable = None;
        self.input_motion.fill(InputMotion::default());
    }

    pub fn log_event(&self, message: &str) {
        self.logger.log(OK, Category::Events, message);
    }

    /// A failed computation: enter the Error state.
    pub(crate) fn failed<T>(&mut self, message: String) -> Result<T, String> {
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

    pub fn enter_initialization_mode(&mut self) {
        self.state = FmiState::InitializationMode;
        self.dirty = true;
        self.untouched = false;
        self.jacobian.changed();
    }

    /// Sets the states that have start parameters, checks the parameters, sets the remaining
    /// initial states and the modes, computes the outputs.
    pub(crate) fn initialize(&mut self) -> Result<(), String> {
        let t = self.time;
        self.model.start_states();
        self.model
            .initialize(t)
            .map_err(|e| format!("t = {t}: {e}"))?;
        integrator::event_iteration(&mut self.model, t).map_err(|e| step_error_text(&e))?;
        self.model.outputs(t);
        self.dirty = false;
        self.jacobian.changed();
        self.unrepresentable = None;
        Ok(())
    }

    pub fn exit_initialization_mode(&mut self) -> CallResult {
        let before = self.model.clone();
        if let Err(e) = self.initialize() {
            self.model = before;
            return self.failed(format!("initialization failed: {e}"));
        }
        if self.interface == Interface::ModelExchange {
            // The importer's event iteration at the start: fmi2NewDiscreteStates.
            self.state = FmiState::EventMode;
            return Ok(OK);
        }
        // Built now, so that stepping allocates nothing.
        self.integrator();
        // FMI 3.0: a Co-Simulation instance with Event Mode starts in it.
        self.state = if self.event_mode_used {
            FmiState::EventMode
        } else {
            FmiState::StepComplete
        };
        Ok(OK)
    }

    /// Recomputes outputs that depend on values set since the last computation.
    pub(crate) fn refresh(&mut self) -> Result<(), String> {
        // In the Error state the model may never have been initialized: report what it holds.
        if self.state == FmiState::Error {
            return Ok(());
        }
        if !self.dirty {
            return self.unrepresentable.clone().map_or(Ok(()), Err);
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
        let before = self.model.clone();
        self.model.outputs(self.time);
        if self.interface == Interface::ModelExchange {
            // An importer's trial states may lie outside the model's domain (a CVT sheave far
            // beyond its travel): there the outputs are not defined, and the getters say so.
            let dx = &mut self.scratch[..M::STATES];
            self.model.derivatives(self.time, dx);
            self.outside = dx.iter().any(|v| !v.is_finite());
        }
        self.dirty = false;
        self.jacobian.changed();
        // Not finite: the outputs stay as they were, and every getter says why until a value
        // changes.
        self.unrepresentable = match self.outputs_not_finite() {
            Some(why) if !self.outside => {
                self.model = before;
                Some(format!("t = {}: {why}", self.time))
            }
            _ => None,
        };
        self.unrepresentable.clone().map_or(Ok(()), Err)
    }

    /// Finite inputs can still overflow what the model computes from them (1e160 rad/s squared
    /// in a kinetic energy): the first Real output that is not finite, and the inputs.
    pub(crate) fn outputs_not_finite(&self) -> Option<String> {
        if self.output_check.all_finite(&self.model) {
            return None;
        }
        let output = self
            .vars
            .iter()
            .filter(|v| v.causality == Causality::Output)
            .find_map(|v| match v.access {
                Access::Real { get, .. } if !get(&self.model).is_finite() => {
                    Some(format!("{} = {}", v.name, number(get(&self.model))))
                }
                _ => None,
            })?;
        let inputs: Vec<String> = self
            .vars
            .iter()
            .filter(|v| v.causality == Causality::Input)
            .filter_map(|v| match v.access {
                Access::Real { get, .. } => {
                    Some(format!("{} = {}", v.name, number(get(&self.model))))
                }
                _ => None,
            })
            .collect();
        Some(format!(
            "{output} is not a finite number: the inputs ({}) or the states have left what the model can represent",
            inputs.join(", ")
        ))
    }

    /// fmi2Discard, with the reason logged, where the states set by a Model Exchange importer
    /// lie outside the model's domain (FMI 2.0: the importer then takes a smaller step).
    pub(crate) fn defined(&self, what: &str) -> Status {
        if !self.outside {
            return OK;
        }
        self.logger.log(
            DISCARD,
            Category::Warning,
            &format!(
                "t = {}: {what} not defined: the continuous states lie outside the model's domain (its derivatives are not finite there); try a smaller step",
                self.time
            ),
        );
        DISCARD
    }

    pub(crate) fn var(&self, vr: u32) -> Result<&Var<M>, String> {
        self.vars
            .get(vr as usize)
            .ok_or_else(|| format!("unknown value reference {vr}"))
    }

    pub fn get_real(&mut self, vrs: &[u32], values: &mut [f64]) -> CallResult {
        self.get(vrs, values, "a Real", |access, model| match access {
            Access::Real { get, .. } => Some(get(model)),
            _ => None,
        })
    }

    pub fn get_integer(&mut self, vrs: &[u32], values: &mut [i32]) -> CallResult {
        self.get(vrs, values, "an Integer", |access, model| match access {
            Access::Integer { get, .. } => Some(get(model)),
            _ => None,
        })
    }

    /// The values of `vrs`, each read by `read` (None: not of the type asked, `kind`).
    #[inline(always)]
    fn get<T>(
        &mut self,
        vrs: &[u32],
        values: &mut [T],
        kind: &str,
        read: impl Fn(&Access<M>, &M) -> Option<T>,
    ) -> CallResult {
        self.refresh()?;
        for (vr, value) in vrs.iter().zip(values.iter_mut()) {
            *value = read(&self.var(*vr)?.access, &self.model)
                .ok_or_else(|| format!("value reference {vr} is not {kind}"))?;
        }
        Ok(self.defined("the outputs are"))
    }

    /// The phase of the life cycle that decides which variables may be set now.
    fn phase(&self) -> Phase {
        match self.state {
            FmiState::StepComplete | FmiState::EventMode => Phase::Stepping,
            FmiState::ContinuousTimeMode => Phase::ContinuousTime,
            _ => Phase::Initialization,
        }
    }

    /// Checks that `value` may be written to `vr` now: the packed table answers, and only a
    /// refusal reads the declaration for its reason.
    #[inline(always)]
    fn accept(&self, vr: u32, value: f64, real: bool, phase: Phase) -> Result<(), String> {
        match self.setters.get(vr as usize) {
            Some(s) if s.accepts(value, real, phase) => Ok(()),
            _ => self.refusal(vr, value, real, phase),
        }
    }

    /// Why `value` may not be written to `vr` now; the reason names the variable.
    #[cold]
    fn refusal(&self, vr: u32, value: f64, real: bool, phase: Phase) -> Result<(), String> {
        let v = self.var(vr)?;
        let t = self.time;
        if v.is_real() != real {
            return Err(format!("{} (vr {vr}) has another type", v.name));
        }
        if !v.settable(phase) {
            return Err(format!("{} (t = {t})", v.not_settable(phase)));
        }
        if !value.is_finite() {
            return Err(format!(
                "{} = {value} at t = {t} refused: not a finite number",
                v.name
            ));
        }
        let reason = v.range_violation(value).unwrap_or_default();
        Err(format!("{} = {value} at t = {t} refused: {reason}", v.name))
    }

    pub fn set_real(&mut self, vrs: &[u32], values: &[f64]) -> CallResult {
        // All or nothing: check every value before writing any.
        let phase = self.phase();
        for (vr, value) in vrs.iter().zip(values) {
            self.accept(*vr, *value, true, phase)?;
        }
        // A value set to what it was changes nothing the integration depends on (importers
        // set every input at every communication point).
        let mut moved = !self.untouched;
        for (vr, value) in vrs.iter().zip(values) {
            if let Access::Real { get, set } = self.setters[*vr as usize].access {
                moved = moved || get(&self.model).to_bits() != value.to_bits();
                set(&mut self.model, *value);
            }
        }
        if phase == Phase::ContinuousTime {
            let t = self.time;
            for (vr, value) in vrs.iter().zip(values) {
                if self.setters[*vr as usize].input {
                    self.input_motion[*vr as usize].observe(t, *value);
                }
            }
        }
        self.dirty = true;
        self.untouched = !moved;
        self.jacobian.changed();
        Ok(OK)
    }

    pub fn set_integer(&mut self, vrs: &[u32], values: &[i32]) -> CallResult {
        let phase = self.phase();
        for (vr, value) in vrs.iter().zip(values) {
            self.accept(*vr, f64::from(*value), false, phase)?;
        }
        let mut moved = !self.untouched;
        for (vr, value) in vrs.iter().zip(values) {
            if let Access::Integer { get, set } = self.setters[*vr as usize].access {
                moved = moved || get(&self.model) != *value;
                set(&mut self.model, *value);
            }
        }
        self.dirty = true;
        self.untouched = !moved;
        self.jacobian.changed();
        Ok(OK)
    }

    pub fn terminate(&mut self) {
        self.state = FmiState::Terminated;
    }
}

pub(crate) fn step_error_text(e: &StepError) -> String {
    match e {
        StepError::Invalid(t, inv) => format!("t = {t}: {inv}"),
        StepError::Solver(t, msg) => format!("t = {t}: {msg}"),
    }
}

/// A value as a message shows it: huge and tiny ones in exponent form (1e160, not 161 digits).
fn number(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-4..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}
