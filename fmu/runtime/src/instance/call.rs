//! One call of either C ABI on an instance, once for both: logged (logCalls), refused with a
//! logged reason unless its interface and the instance's state allow it, and run inside
//! `catch_unwind`, so that a panic becomes fmi2Fatal/fmi3Fatal for that instance and never
//! unwinds into the importer. The layers only name the function and the states it is allowed
//! in.

use super::{CallResult, FmiState, Instance, Interface};
use crate::logger::{Category, Status, ERROR, FATAL, OK};
use crate::model::Model;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What a C ABI layer's instance holds the core in (FMI 2.0: the core itself; FMI 3.0: the
/// core and what FMI 3.0 Co-Simulation adds).
pub(crate) trait HoldsCore<M: Model> {
    fn core(&mut self) -> &mut Instance<M>;
}

impl<M: Model> HoldsCore<M> for Instance<M> {
    #[inline(always)]
    fn core(&mut self) -> &mut Instance<M> {
        self
    }
}

/// The FMI version whose names a refusal uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    Fmi2,
    Fmi3,
}

impl FmiState {
    /// The state's name in `version`'s standard.
    pub(crate) fn name(self, version: Version) -> &'static str {
        match (self, version) {
            (FmiState::Instantiated, _) => "Instantiated",
            (FmiState::InitializationMode, _) => "Initialization Mode",
            (FmiState::StepComplete, Version::Fmi2) => "Step Complete",
            (FmiState::StepComplete, Version::Fmi3) => "Step Mode",
            (FmiState::Terminated, _) => "Terminated",
            (FmiState::Error, _) => "Error",
            (FmiState::Fatal, _) => "Fatal",
            (FmiState::EventMode, _) => "Event Mode",
            (FmiState::ContinuousTimeMode, _) => "Continuous-Time Mode",
        }
    }
}

/// The interface a function of either version belongs to, if only one: called on an instance
/// of the other, it is refused. A `match` on whole names, so that with the name a constant it
/// folds away at compile time.
#[inline(always)]
fn only_for(function: &str) -> Option<Interface> {
    match function {
        "fmi2SetRealInputDerivatives"
        | "fmi2GetRealOutputDerivatives"
        | "fmi3GetOutputDerivatives"
        | "fmi2DoStep"
        | "fmi3DoStep"
        | "fmi2CancelStep"
        | "fmi3EnterStepMode"
        | "fmi2GetStatus"
        | "fmi2GetRealStatus"
        | "fmi2GetIntegerStatus"
        | "fmi2GetBooleanStatus"
        | "fmi2GetStringStatus" => Some(Interface::CoSimulation),
        // FMI 2.0's Event Mode is Model Exchange's; FMI 3.0 Co-Simulation has one too.
        "fmi2EnterEventMode"
        | "fmi2NewDiscreteStates"
        | "fmi2EnterContinuousTimeMode"
        | "fmi3EnterContinuousTimeMode"
        | "fmi2CompletedIntegratorStep"
        | "fmi3CompletedIntegratorStep"
        | "fmi2SetTime"
        | "fmi3SetTime"
        | "fmi2SetContinuousStates"
        | "fmi3SetContinuousStates"
        | "fmi2GetDerivatives"
        | "fmi3GetContinuousStateDerivatives"
        | "fmi2GetEventIndicators"
        | "fmi3GetEventIndicators"
        | "fmi2GetContinuousStates"
        | "fmi3GetContinuousStates"
        | "fmi2GetNominalsOfContinuousStates"
        | "fmi3GetNominalsOfContinuousStates" => Some(Interface::ModelExchange),
        _ => None,
    }
}

impl<M: Model> Instance<M> {
    /// Why `function` may not be called now, if it may not.
    #[inline(always)]
    pub(crate) fn call_refusal(
        &self,
        function: &str,
        states: &[FmiState],
        version: Version,
    ) -> Option<String> {
        if let Some(only) = only_for(function).filter(|i| *i != self.interface) {
            return Some(format!(
                "{function} is a {} function; this instance was created for {}",
                only.name(),
                self.interface.name()
            ));
        }
        (!states.contains(&self.state))
            .then(|| format!("{function} is not allowed in {}", self.state.name(version)))
    }
}

/// Runs `f` on `instance` if `function` is allowed in its state; the status to return.
#[inline(always)]
pub(crate) fn guarded<M: Model, I: HoldsCore<M>>(
    instance: &mut I,
    function: &str,
    states: &[FmiState],
    version: Version,
    f: impl FnOnce(&mut I) -> CallResult,
) -> Status {
    let core = instance.core();
    core.logger.log(OK, Category::Calls, function);
    if let Some(msg) = core.call_refusal(function, states, version) {
        core.logger.log(ERROR, Category::Error, &msg);
        return ERROR;
    }
    match catch_unwind(AssertUnwindSafe(|| f(&mut *instance))) {
        Ok(Ok(status)) => status,
        Ok(Err(msg)) => {
            let msg = format!("{function}: {msg}");
            instance.core().logger.log(ERROR, Category::Error, &msg);
            ERROR
        }
        Err(payload) => {
            let core = instance.core();
            core.state = FmiState::Fatal;
            let msg = format!("{function}: internal error: {}", panic_text(&*payload));
            core.logger.log(FATAL, Category::Error, &msg);
            FATAL
        }
    }
}

/// A panic's message.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// A request for a feature these FMUs do not provide: refused with `why`, unless it is empty.
pub(crate) fn unsupported(n: usize, why: &str) -> CallResult {
    if n == 0 {
        Ok(OK)
    } else {
        Err(why.to_string())
    }
}

/// A getter or setter of a type these models have no variable of (`types`: the ones they
/// have): any value reference is of another type.
pub(crate) fn no_such_type(vrs: &[u32], types: &str) -> CallResult {
    match vrs.first() {
        None => Ok(OK),
        Some(vr) => Err(format!(
            "value reference {vr} is not of this type: the model has no variable of it (only {types})"
        )),
    }
}
