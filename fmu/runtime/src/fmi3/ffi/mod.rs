//! The FMI 3.0 C ABI: every fmi3* function, generic over the model, on the instance core the
//! FMI 2.0 ABI uses. [`crate::export_fmu!`] writes them with `#[no_mangle]` names.
//!
//! Every entry point checks its pointers and the call against the FMI 3.0 state machine, and
//! runs inside `catch_unwind`: a panic becomes fmi3Fatal for that instance. A call made from
//! inside the intermediate update callback, while `fmi3DoStep` runs, is refused, but for the
//! gets and sets of Intermediate Update Mode when the importer required intermediate variables
//! ([`super::intermediate`]).

use super::instance::Instance3;
use super::intermediate::{self, Access, Required, Use};
use crate::abi::{check_instantiation, out, slice, slice_mut, text};
use crate::describe;
use crate::instance::call::{self, guarded, HoldsCore, Version};
use crate::instance::{allowed, CallResult, FmiState, Instance, Interface};
use crate::logger::{Category, Logger, Status, ERROR, OK};
use crate::model::Model;
use fmi_abi::fmi3::{
    Binary, ClockUpdate, DependencyKind, Environment, IntermediateUpdate, IntervalQualifier,
    LogMessage, Preemption, Str, ValueReference, DEPENDENT,
};
use model_description::fmi3_extra::{indicator_name, Extra};
use std::cell::{Cell, UnsafeCell};
use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

mod co_simulation;
mod dependencies;
mod fmu_state;
mod model_exchange;
mod variables;
pub use co_simulation::*;
pub use dependencies::*;
pub use fmu_state::*;
pub use model_exchange::*;
pub use variables::*;

impl<M: Model> HoldsCore<M> for Instance3<M> {
    #[inline(always)]
    fn core(&mut self) -> &mut Instance<M> {
        &mut self.core
    }
}

/// What `fmi3Instance` points at: the instance, and who may use it now (the intermediate
/// update callback runs inside `fmi3DoStep`).
struct Handle<M: Model> {
    access: Cell<Access>,
    /// The importer's logger, for refusing a call made from inside the callback while the
    /// instance, and its own logger, are out of reach.
    refusals: Logger,
    instance: UnsafeCell<Instance3<M>>,
}

impl<M: Model> Handle<M> {
    /// Whether `function`, called while the handle is in `access` (not [`Access::Free`]), may
    /// run; if not, the reason is logged where the instance allows it.
    #[cold]
    fn admits(&self, access: Access, function: &str) -> bool {
        let why = match access {
            Access::Free => return true,
            // The instance is inside a call (its logger called back): not even logged.
            Access::Busy => return false,
            Access::Open if intermediate::allowed(function) => return true,
            Access::Open => "in Intermediate Update Mode only fmi3Get{VariableType} and fmi3GetOutputDerivatives of the required intermediate variables, and fmi3Set{VariableType} of the required inputs are allowed (FMI 3.0.2 section 4.2.2)",
            Access::Sealed => "no intermediate variables were required at fmi3InstantiateCoSimulation (requiredIntermediateVariables), so the callback serves early return only (intermediateVariableGetAllowed and intermediateVariableSetRequested are false)",
        };
        // A call made from the logger while it reports this is refused without a word.
        self.access.set(Access::Busy);
        self.refusals.log(
            ERROR,
            Category::Error,
            &format!("{function} called inside the intermediate update callback: refused: {why}"),
        );
        self.access.set(access);
        false
    }
}

/// Runs `f` on the instance behind `c` if `function` is allowed in its state.
unsafe fn call<M: Model>(
    c: *mut c_void,
    function: &str,
    states: &[FmiState],
    f: impl FnOnce(&mut Instance3<M>) -> CallResult,
) -> Status {
    let Some(handle) = (c as *const Handle<M>).as_ref() else {
        return ERROR;
    };
    let entered = handle.access.get();
    if entered != Access::Free && !handle.admits(entered, function) {
        return ERROR;
    }
    handle.access.set(Access::Busy);
    let instance = &mut *handle.instance.get();
    let status = guarded(instance, function, states, Version::Fmi3, f);
    handle.access.set(entered);
    status
}

pub fn get_version<M: Model>() -> *const c_char {
    c"3.0".as_ptr()
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn set_debug_logging<M: Model>(
    c: *mut c_void,
    on: bool,
    n: usize,
    categories: *const Str,
) -> Status {
    call::<M>(c, "fmi3SetDebugLogging", allowed::ANY_BUT_FATAL, |inst| {
        let mut names = Vec::with_capacity(n);
        for &p in slice(categories, n, "categories")? {
            if p.is_null() {
                return Err("a category name is NULL".into());
            }
            names.push(CStr::from_ptr(p).to_string_lossy().into_owned());
        }
        inst.core.logger.configure(on, &names)?;
        Ok(OK)
    })
}

/// The part of instantiation both interfaces share.
#[allow(clippy::too_many_arguments)]
unsafe fn instantiate<M: Model>(
    function: &str,
    interface: Interface,
    name: Str,
    token: Str,
    logging_on: bool,
    env: Environment,
    log: Option<LogMessage>,
    co_simulation: (bool, bool, Option<IntermediateUpdate>),
    required: (*const ValueReference, usize),
) -> *mut c_void {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let instance_name = text(name).unwrap_or_default();
        let logger = Logger::fmi3(log, env, &instance_name, logging_on);
        let fail = |msg: &str| {
            logger.log(ERROR, Category::Error, &format!("{function}: {msg}"));
            std::ptr::null_mut()
        };
        if let Err(e) = check_instantiation::<M>(&instance_name, text(token), "instantiationToken")
        {
            return fail(&e);
        }
        let (event_mode_used, early_return_allowed, intermediate_update) = co_simulation;
        let core = Instance::<M>::fmi3(logger, interface, event_mode_used);
        let intermediate = match required_intermediate(&core, required, intermediate_update) {
            Ok(intermediate) => intermediate,
            Err(e) => {
                core.logger
                    .log(ERROR, Category::Error, &format!("{function}: {e}"));
                return std::ptr::null_mut();
            }
        };
        let handle = Box::new(Handle {
            access: Cell::new(Access::Free),
            refusals: Logger::fmi3(log, env, &instance_name, logging_on),
            instance: UnsafeCell::new(Instance3 {
                core,
                early_return_allowed,
                intermediate_update,
                env,
                intermediate,
                window: None,
            }),
        });
        Box::into_raw(handle) as *mut c_void
    }));
    result.unwrap_or(std::ptr::null_mut())
}

/// The intermediate variables `requiredIntermediateVariables` names (`None`: it names none),
/// if the instance can serve them.
unsafe fn required_intermediate<M: Model>(
    core: &Instance<M>,
    (vrs, n): (*const ValueReference, usize),
    callback: Option<IntermediateUpdate>,
) -> Result<Option<Required>, String> {
    if n == 0 {
        return Ok(None);
    }
    if callback.is_none() {
        return Err(format!(
            "{n} intermediate variables required, but no intermediateUpdate callback given to serve them in"
        ));
    }
    let vrs = slice(vrs, n, "requiredIntermediateVariables")?;
    Required::new(&core.vars, vrs).map(Some)
}

/// # Safety
/// FMI 3.0 pointer rules for fmi3InstantiateModelExchange.
pub unsafe fn instantiate_model_exchange<M: Model>(
    name: Str,
    token: Str,
    _resources: Str,
    _visible: bool,
    logging_on: bool,
    env: Environment,
    log: Option<LogMessage>,
) -> *mut c_void {
    instantiate::<M>(
        "fmi3InstantiateModelExchange",
        Interface::ModelExchange,
        name,
        token,
        logging_on,
        env,
        log,
        (false, false, None),
        (std::ptr::null(), 0),
    )
}

/// # Safety
/// FMI 3.0 pointer rules for fmi3InstantiateCoSimulation.
#[allow(clippy::too_many_arguments)]
pub unsafe fn instantiate_co_simulation<M: Model>(
    name: Str,
    token: Str,
    _resources: Str,
    _visible: bool,
    logging_on: bool,
    event_mode_used: bool,
    early_return_allowed: bool,
    required: *const ValueReference,
    n_required: usize,
    env: Environment,
    log: Option<LogMessage>,
    update: Option<IntermediateUpdate>,
) -> *mut c_void {
    instantiate::<M>(
        "fmi3InstantiateCoSimulation",
        Interface::CoSimulation,
        name,
        token,
        logging_on,
        env,
        log,
        (event_mode_used, early_return_allowed, update),
        (required, n_required),
    )
}

/// # Safety
/// FMI 3.0 pointer rules.
#[allow(clippy::too_many_arguments)]
pub unsafe fn instantiate_scheduled_execution<M: Model>(
    _name: Str,
    _token: Str,
    _resources: Str,
    _visible: bool,
    _logging_on: bool,
    env: Environment,
    log: Option<LogMessage>,
    _clock: Option<ClockUpdate>,
    _lock: Option<Preemption>,
    _unlock: Option<Preemption>,
) -> *mut c_void {
    let logger = Logger::fmi3(log, env, "", true);
    logger.log(
        ERROR,
        Category::Error,
        "fmi3InstantiateScheduledExecution: Scheduled Execution is not provided (modelDescription.xml has no ScheduledExecution element)",
    );
    std::ptr::null_mut()
}

/// # Safety
/// `c` is NULL or was returned by an instantiate function of this model and not freed.
pub unsafe fn free_instance<M: Model>(c: *mut c_void) {
    if c.is_null() || (*(c as *const Handle<M>)).access.get() != Access::Free {
        return;
    }
    let _ = catch_unwind(|| drop(Box::from_raw(c as *mut Handle<M>)));
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn enter_initialization_mode<M: Model>(
    c: *mut c_void,
    tolerance_defined: bool,
    tolerance: f64,
    start: f64,
    stop_defined: bool,
    stop: f64,
) -> Status {
    call::<M>(
        c,
        "fmi3EnterInitializationMode",
        allowed::INSTANTIATED,
        |inst| {
            let tol = tolerance_defined.then_some(tolerance);
            inst.core
                .setup_experiment(tol, start, stop_defined.then_some(stop))?;
            inst.core.enter_initialization_mode();
            Ok(OK)
        },
    )
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn exit_initialization_mode<M: Model>(c: *mut c_void) -> Status {
    call::<M>(
        c,
        "fmi3ExitInitializationMode",
        allowed::INITIALIZATION,
        |inst| inst.core.exit_initialization_mode(),
    )
}

/// States in which `fmi3EnterEventMode` is allowed: Model Exchange's Continuous-Time Mode and
/// Co-Simulation's Step Mode (with Event Mode used), and Event Mode itself.
const ENTER_EVENT_MODE: &[FmiState] = &[
    FmiState::ContinuousTimeMode,
    FmiState::StepComplete,
    FmiState::EventMode,
];

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn enter_event_mode<M: Model>(c: *mut c_void) -> Status {
    call::<M>(c, "fmi3EnterEventMode", ENTER_EVENT_MODE, |inst| {
        inst.core.enter_event_mode()?;
        Ok(OK)
    })
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn terminate<M: Model>(c: *mut c_void) -> Status {
    call::<M>(c, "fmi3Terminate", allowed::TERMINATE, |inst| {
        inst.core.terminate();
        Ok(OK)
    })
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn reset<M: Model>(c: *mut c_void) -> Status {
    call::<M>(c, "fmi3Reset", allowed::ANY_BUT_FATAL, |inst| {
        inst.core.reset();
        Ok(OK)
    })
}

/// Checks that an array argument holds one value per value reference (all variables here are
/// scalars).
pub(super) fn scalars(n: usize, n_values: usize) -> Result<(), String> {
    if n == n_values {
        Ok(())
    } else {
        Err(format!(
            "nValues = {n_values} for {n} value references: every variable is a scalar"
        ))
    }
}

/// A function of a feature these FMUs do not provide: fmi3Error with the reason, unless the
/// request is empty.
unsafe fn unsupported<M: Model>(c: *mut c_void, function: &str, n: usize, why: &str) -> Status {
    call::<M>(c, function, allowed::ANY_BUT_FATAL, |_| {
        call::unsupported(n, why)
    })
}

macro_rules! no_such_type {
    ($($name:ident $fmi:literal $states:ident $value:ty $(, $extra:ty)*;)*) => {
        $(
            /// # Safety
            /// FMI 3.0 pointer rules.
            pub unsafe fn $name<M: Model>(
                c: *mut c_void,
                vr: *const ValueReference,
                n: usize,
                $(_: $extra,)*
                _: $value,
                _: usize,
            ) -> Status {
                no_such_type::<M>(c, $fmi, allowed::$states, vr, n)
            }
        )*
    };
}

no_such_type! {
    get_float32 "fmi3GetFloat32" GET *mut f32;
    get_int8 "fmi3GetInt8" GET *mut i8;
    get_uint8 "fmi3GetUInt8" GET *mut u8;
    get_int16 "fmi3GetInt16" GET *mut i16;
    get_uint16 "fmi3GetUInt16" GET *mut u16;
    get_uint32 "fmi3GetUInt32" GET *mut u32;
    get_int64 "fmi3GetInt64" GET *mut i64;
    get_uint64 "fmi3GetUInt64" GET *mut u64;
    get_boolean "fmi3GetBoolean" GET *mut bool;
    get_string "fmi3GetString" GET *mut Str;
    get_binary "fmi3GetBinary" GET *mut Binary, *mut usize;
    set_float32 "fmi3SetFloat32" SET *const f32;
    set_int8 "fmi3SetInt8" SET *const i8;
    set_uint8 "fmi3SetUInt8" SET *const u8;
    set_int16 "fmi3SetInt16" SET *const i16;
    set_uint16 "fmi3SetUInt16" SET *const u16;
    set_uint32 "fmi3SetUInt32" SET *const u32;
    set_int64 "fmi3SetInt64" SET *const i64;
    set_uint64 "fmi3SetUInt64" SET *const u64;
    set_boolean "fmi3SetBoolean" SET *const bool;
    set_string "fmi3SetString" SET *const Str;
    set_binary "fmi3SetBinary" SET *const Binary, *const usize;
}

const NO_CLOCKS: &str = "clocks are not provided: the model declares none";

/// The clock functions: refused unless the request is empty (the model has no clock).
macro_rules! no_clocks {
    ($($name:ident $fmi:literal ($($ty:ty),*);)*) => {
        $(
            /// # Safety
            /// FMI 3.0 pointer rules.
            pub unsafe fn $name<M: Model>(
                c: *mut c_void,
                _: *const ValueReference,
                n: usize,
                $(_: $ty),*
            ) -> Status {
                unsupported::<M>(c, $fmi, n, NO_CLOCKS)
            }
        )*
    };
}

no_clocks! {
    get_clock "fmi3GetClock" (*mut bool);
    set_clock "fmi3SetClock" (*const bool);
    get_interval_decimal "fmi3GetIntervalDecimal" (*mut f64, *mut IntervalQualifier);
    get_interval_fraction "fmi3GetIntervalFraction" (*mut u64, *mut u64, *mut IntervalQualifier);
    get_shift_decimal "fmi3GetShiftDecimal" (*mut f64);
    get_shift_fraction "fmi3GetShiftFraction" (*mut u64, *mut u64);
    set_interval_decimal "fmi3SetIntervalDecimal" (*const f64);
    set_interval_fraction "fmi3SetIntervalFraction" (*const u64, *const u64);
    set_shift_decimal "fmi3SetShiftDecimal" (*const f64);
    set_shift_fraction "fmi3SetShiftFraction" (*const u64, *const u64);
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn activate_model_partition<M: Model>(
    c: *mut c_void,
    _: ValueReference,
    _: f64,
) -> Status {
    unsupported::<M>(
        c,
        "fmi3ActivateModelPartition",
        1,
        "Scheduled Execution is not provided",
    )
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn evaluate_discrete_states<M: Model>(c: *mut c_void) -> Status {
    unsupported::<M>(
        c,
        "fmi3EvaluateDiscreteStates",
        1,
        "not provided (providesEvaluateDiscreteStates = false): the models have no clocked partitions",
    )
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn enter_configuration_mode<M: Model>(c: *mut c_void) -> Status {
    unsupported::<M>(
        c,
        "fmi3EnterConfigurationMode",
        1,
        "Configuration Mode is not provided: the models have no structural parameters",
    )
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn exit_configuration_mode<M: Model>(c: *mut c_void) -> Status {
    unsupported::<M>(
        c,
        "fmi3ExitConfigurationMode",
        1,
        "Configuration Mode is not provided: the models have no structural parameters",
    )
}

/// Directional and adjoint derivatives, where the model provides them; otherwise refused (an
/// empty request is trivially fine). Every variable is a scalar, so the serialized lengths
/// `nSeed` and `nSensitivity` are the numbers of knowns and unknowns (directional) or of
/// unknowns and knowns (adjoint).
macro_rules! derivatives {
    ($($name:ident $fmi:literal $what:literal $adjoint:literal;)*) => {
        $(
            /// # Safety
            /// FMI 3.0 pointer rules.
            #[allow(clippy::too_many_arguments)]
            pub unsafe fn $name<M: Model>(
                c: *mut c_void,
                unknowns: *const ValueReference,
                n_unknowns: usize,
                knowns: *const ValueReference,
                n_knowns: usize,
                seed: *const f64,
                n_seed: usize,
                sensitivity: *mut f64,
                n_sensitivity: usize,
            ) -> Status {
                if !M::PROVIDES_DERIVATIVES {
                    return unsupported::<M>(c, $fmi, n_unknowns * n_knowns, $what);
                }
                let handle = (c as *const Handle<M>).as_ref();
                if let Some(handle) = handle.filter(|h| !$adjoint && h.access.get() == Access::Free) {
                    let inst = &mut (*handle.instance.get()).core;
                    if (n_seed, n_sensitivity) == (n_knowns, n_unknowns)
                        && crate::abi::directional_at_once(
                            inst, unknowns, n_unknowns, knowns, n_knowns, seed, sensitivity,
                        )
                    {
                        return OK;
                    }
                }
                call::<M>(c, $fmi, allowed::DERIVATIVES, |inst| {
                    let (by_seed, by_sensitivity) = if $adjoint {
                        (n_unknowns, n_knowns)
                    } else {
                        (n_knowns, n_unknowns)
                    };
                    if (n_seed, n_sensitivity) != (by_seed, by_sensitivity) {
                        return Err(format!(
                            "nSeed = {n_seed} and nSensitivity = {n_sensitivity} for {n_unknowns} unknowns and {n_knowns} knowns: every variable is a scalar, so they must be {by_seed} and {by_sensitivity}"
                        ));
                    }
                    let (unknowns, knowns) = (
                        slice(unknowns, n_unknowns, "unknowns")?,
                        slice(knowns, n_knowns, "knowns")?,
                    );
                    let seed = slice(seed, n_seed, "seed")?;
                    let sensitivity = slice_mut(sensitivity, n_sensitivity, "sensitivity")?;
                    if $adjoint {
                        inst.core.adjoint_derivative(unknowns, knowns, seed, sensitivity)
                    } else {
                        inst.core.directional_derivative(unknowns, knowns, seed, sensitivity)
                    }
                })
            }
        )*
    };
}

derivatives! {
    get_directional_derivative "fmi3GetDirectionalDerivative"
        "directional derivatives are not provided (providesDirectionalDerivatives = false)" false;
    get_adjoint_derivative "fmi3GetAdjointDerivative"
        "adjoint derivatives are not provided (providesAdjointDerivatives = false)" true;
}

/// The extra variable (time, an event indicator) `vr` names, if it names one.
fn extra<M: Model>(vr: ValueReference, n_vars: usize) -> Option<Extra> {
    Extra::of(vr, n_vars, M::EVENT_INDICATORS)
}
