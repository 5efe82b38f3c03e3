//! The C ABI: every fmi2* function of the Co-Simulation and Model Exchange interfaces, generic
//! over the model.
//! [`export_fmu!`](crate::export_fmu) instantiates them with `#[no_mangle]` names in a
//! component crate.
//!
//! Every entry point checks its pointers, checks the call against the state machine, and runs
//! the call inside `catch_unwind`: a panic becomes fmi2Fatal for that instance, never an unwind
//! into the importer. The instance is the only state; there is nothing global.

use super::instance::{allowed, CallResult, FmiState, Instance, Interface};
use super::logger::{CallbackFunctions, Category, Logger, Status, DISCARD, ERROR, FATAL, OK};
use crate::describe;
use crate::model::Model;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

const MODEL_EXCHANGE: c_int = 0;
const CO_SIMULATION: c_int = 1;

/// An FMU state handed to the importer: the serialized bytes.
struct FmuState {
    bytes: Vec<u8>,
}

/// A pointer and a length from the importer as a slice; `n == 0` needs no pointer.
unsafe fn slice<'a, T>(ptr: *const T, n: usize, what: &str) -> Result<&'a [T], String> {
    if n == 0 {
        Ok(&[])
    } else if ptr.is_null() {
        Err(format!("{what} is NULL with a length of {n}"))
    } else {
        Ok(std::slice::from_raw_parts(ptr, n))
    }
}

unsafe fn slice_mut<'a, T>(ptr: *mut T, n: usize, what: &str) -> Result<&'a mut [T], String> {
    if n == 0 {
        Ok(&mut [])
    } else if ptr.is_null() {
        Err(format!("{what} is NULL with a length of {n}"))
    } else {
        Ok(std::slice::from_raw_parts_mut(ptr, n))
    }
}

unsafe fn out<'a, T>(ptr: *mut T, what: &str) -> Result<&'a mut T, String> {
    ptr.as_mut().ok_or_else(|| format!("{what} is NULL"))
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Runs `f` on the instance behind `c` if `function` is allowed in its state.
#[inline(always)]
unsafe fn call<M: Model>(
    c: *mut c_void,
    function: &str,
    states: &[FmiState],
    f: impl FnOnce(&mut Instance<M>) -> CallResult,
) -> Status {
    let Some(instance) = (c as *mut Instance<M>).as_mut() else {
        return ERROR;
    };
    instance.logger.log(OK, Category::Calls, function);
    if let Err(msg) = instance.check_state(function, states) {
        instance.logger.log(ERROR, Category::Error, &msg);
        return ERROR;
    }
    match catch_unwind(AssertUnwindSafe(|| f(&mut *instance))) {
        Ok(Ok(status)) => status,
        Ok(Err(msg)) => {
            instance
                .logger
                .log(ERROR, Category::Error, &format!("{function}: {msg}"));
            ERROR
        }
        Err(payload) => {
            instance.state = FmiState::Fatal;
            let msg = format!("{function}: internal error: {}", panic_text(&*payload));
            instance.logger.log(FATAL, Category::Error, &msg);
            FATAL
        }
    }
}

pub fn get_types_platform<M: Model>() -> *const c_char {
    c"default".as_ptr()
}

pub fn get_version<M: Model>() -> *const c_char {
    c"2.0".as_ptr()
}

/// # Safety
/// Pointers as in the FMI 2.0 standard for fmi2Instantiate.
pub unsafe fn instantiate<M: Model>(
    instance_name: *const c_char,
    fmu_type: c_int,
    guid: *const c_char,
    _resource_location: *const c_char,
    functions: *const CallbackFunctions,
    _visible: c_int,
    logging_on: c_int,
) -> *mut c_void {
    let result = catch_unwind(|| {
        let (callback, env) = match functions.as_ref() {
            Some(f) => (f.logger, f.component_environment),
            None => (None, std::ptr::null_mut()),
        };
        let name = match instance_name.as_ref() {
            Some(_) => CStr::from_ptr(instance_name).to_string_lossy().into_owned(),
            None => String::new(),
        };
        let logger = Logger::new(callback, env, &name, logging_on != 0);
        let fail = |msg: &str| {
            logger.log(ERROR, Category::Error, &format!("fmi2Instantiate: {msg}"));
            std::ptr::null_mut()
        };
        if instance_name.is_null() || name.is_empty() {
            return fail("instanceName is NULL or empty");
        }
        let interface = match fmu_type {
            MODEL_EXCHANGE => Interface::ModelExchange,
            CO_SIMULATION => Interface::CoSimulation,
            _ => {
                return fail(&format!(
                    "fmuType {fmu_type} requested: 0 (Model Exchange) or 1 (Co-Simulation)"
                ))
            }
        };
        let expected = describe::guid::<M>();
        let given = match guid.as_ref() {
            Some(_) => CStr::from_ptr(guid).to_string_lossy().into_owned(),
            None => return fail("fmuGUID is NULL"),
        };
        if given != expected {
            return fail(&format!("fmuGUID {given} does not match {expected}"));
        }
        // The resource location may be NULL or anything: these models ship no resources.
        let instance = Box::new(Instance::<M>::new(logger, interface));
        Box::into_raw(instance) as *mut c_void
    });
    result.unwrap_or(std::ptr::null_mut())
}

/// # Safety
/// `c` is NULL or was returned by [`instantiate`] for the same model and not freed.
pub unsafe fn free_instance<M: Model>(c: *mut c_void) {
    if !c.is_null() {
        let _ = catch_unwind(|| drop(Box::from_raw(c as *mut Instance<M>)));
    }
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn set_debug_logging<M: Model>(
    c: *mut c_void,
    on: c_int,
    n: usize,
    categories: *const *const c_char,
) -> Status {
    call::<M>(c, "fmi2SetDebugLogging", allowed::ANY_BUT_FATAL, |inst| {
        let mut names = Vec::with_capacity(n);
        for &p in slice(categories, n, "categories")? {
            if p.is_null() {
                return Err("a category name is NULL".into());
            }
            names.push(CStr::from_ptr(p).to_string_lossy().into_owned());
        }
        inst.logger.configure(on != 0, &names)?;
        Ok(OK)
    })
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn setup_experiment<M: Model>(
    c: *mut c_void,
    tolerance_defined: c_int,
    tolerance: f64,
    start: f64,
    stop_defined: c_int,
    stop: f64,
) -> Status {
    call::<M>(c, "fmi2SetupExperiment", allowed::INSTANTIATED, |inst| {
        let tol = (tolerance_defined != 0).then_some(tolerance);
        inst.setup_experiment(tol, start, (stop_defined != 0).then_some(stop))
    })
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn enter_initialization_mode<M: Model>(c: *mut c_void) -> Status {
    call::<M>(
        c,
        "fmi2EnterInitializationMode",
        allowed::INSTANTIATED,
        |inst| {
            inst.enter_initialization_mode();
            Ok(OK)
        },
    )
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn exit_initialization_mode<M: Model>(c: *mut c_void) -> Status {
    call::<M>(
        c,
        "fmi2ExitInitializationMode",
        allowed::INITIALIZATION,
        |inst| inst.exit_initialization_mode(),
    )
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn terminate<M: Model>(c: *mut c_void) -> Status {
    call::<M>(c, "fmi2Terminate", allowed::TERMINATE, |inst| {
        inst.terminate();
        Ok(OK)
    })
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn reset<M: Model>(c: *mut c_void) -> Status {
    call::<M>(c, "fmi2Reset", allowed::ANY_BUT_FATAL, |inst| {
        inst.reset();
        Ok(OK)
    })
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_real<M: Model>(c: *mut c_void, vr: *const u32, n: usize, v: *mut f64) -> Status {
    call::<M>(c, "fmi2GetReal", allowed::GET, |inst| {
        inst.get_real(slice(vr, n, "vr")?, slice_mut(v, n, "value")?)
    })
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_integer<M: Model>(
    c: *mut c_void,
    vr: *const u32,
    n: usize,
    v: *mut c_int,
) -> Status {
    call::<M>(c, "fmi2GetInteger", allowed::GET, |inst| {
        inst.get_integer(slice(vr, n, "vr")?, slice_mut(v, n, "value")?)
    })
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_real_output_derivatives<M: Model>(
    c: *mut c_void,
    vr: *const u32,
    n: usize,
    order: *const c_int,
    v: *mut f64,
) -> Status {
    call::<M>(c, "fmi2GetRealOutputDerivatives", allowed::GET, |inst| {
        inst.get_output_derivatives(
            slice(vr, n, "vr")?,
            slice(order, n, "order")?,
            slice_mut(v, n, "value")?,
        )
    })
}

/// Boolean and String: these models declare none, so any value reference is unknown.
/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn no_such_type<M: Model>(
    c: *mut c_void,
    function: &str,
    states: &[FmiState],
    vr: *const u32,
    n: usize,
) -> Status {
    call::<M>(c, function, states, |_| match slice(vr, n, "vr")?.first() {
        None => Ok(OK),
        Some(vr) => Err(format!(
            "value reference {vr} is not of this type: the model has none"
        )),
    })
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn set_real<M: Model>(
    c: *mut c_void,
    vr: *const u32,
    n: usize,
    v: *const f64,
) -> Status {
    call::<M>(c, "fmi2SetReal", allowed::SET, |inst| {
        inst.set_real(slice(vr, n, "vr")?, slice(v, n, "value")?)
    })
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn set_integer<M: Model>(
    c: *mut c_void,
    vr: *const u32,
    n: usize,
    v: *const c_int,
) -> Status {
    call::<M>(c, "fmi2SetInteger", allowed::SET, |inst| {
        inst.set_integer(slice(vr, n, "vr")?, slice(v, n, "value")?)
    })
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_fmu_state<M: Model>(c: *mut c_void, state: *mut *mut c_void) -> Status {
    call::<M>(c, "fmi2GetFMUstate", allowed::ANY_BUT_FATAL, |inst| {
        let slot = out(state, "FMUstate")?;
        let bytes = inst.snapshot();
        match (*slot as *mut FmuState).as_mut() {
            // A state passed in is overwritten, as the standard allows.
            Some(existing) => existing.bytes = bytes,
            None => *slot = Box::into_raw(Box::new(FmuState { bytes })) as *mut c_void,
        }
        Ok(OK)
    })
}

/// # Safety
/// FMI 2.0 pointer rules; `state` was made by this model's fmi2GetFMUstate or
/// fmi2DeSerializeFMUstate.
pub unsafe fn set_fmu_state<M: Model>(c: *mut c_void, state: *mut c_void) -> Status {
    call::<M>(c, "fmi2SetFMUstate", allowed::ANY_BUT_FATAL, |inst| {
        let s = (state as *const FmuState)
            .as_ref()
            .ok_or("FMUstate is NULL")?;
        inst.restore(&s.bytes)?;
        Ok(OK)
    })
}

/// # Safety
/// As [`set_fmu_state`].
pub unsafe fn free_fmu_state<M: Model>(c: *mut c_void, state: *mut *mut c_void) -> Status {
    call::<M>(c, "fmi2FreeFMUstate", allowed::ANY_BUT_FATAL, |_| {
        if let Some(slot) = state.as_mut() {
            if !slot.is_null() {
                drop(Box::from_raw(*slot as *mut FmuState));
                *slot = std::ptr::null_mut();
            }
        }
        Ok(OK)
    })
}

/// # Safety
/// As [`set_fmu_state`].
pub unsafe fn serialized_fmu_state_size<M: Model>(
    c: *mut c_void,
    state: *mut c_void,
    size: *mut usize,
) -> Status {
    call::<M>(
        c,
        "fmi2SerializedFMUstateSize",
        allowed::ANY_BUT_FATAL,
        |_| {
            let s = (state as *const FmuState)
                .as_ref()
                .ok_or("FMUstate is NULL")?;
            *out(size, "size")? = s.bytes.len();
            Ok(OK)
        },
    )
}

/// # Safety
/// As [`set_fmu_state`]; `bytes` holds `size` bytes.
pub unsafe fn serialize_fmu_state<M: Model>(
    c: *mut c_void,
    state: *mut c_void,
    bytes: *mut c_char,
    size: usize,
) -> Status {
    call::<M>(c, "fmi2SerializeFMUstate", allowed::ANY_BUT_FATAL, |_| {
        let s = (state as *const FmuState)
            .as_ref()
            .ok_or("FMUstate is NULL")?;
        if size < s.bytes.len() {
            return Err(format!(
                "buffer of {size} bytes is smaller than the state ({})",
                s.bytes.len()
            ));
        }
        let dst = slice_mut(bytes as *mut u8, s.bytes.len(), "serializedState")?;
        dst.copy_from_slice(&s.bytes);
        Ok(OK)
    })
}

/// # Safety
/// FMI 2.0 pointer rules; `bytes` holds `size` bytes.
pub unsafe fn deserialize_fmu_state<M: Model>(
    c: *mut c_void,
    bytes: *const c_char,
    size: usize,
    state: *mut *mut c_void,
) -> Status {
    call::<M>(
        c,
        "fmi2DeSerializeFMUstate",
        allowed::ANY_BUT_FATAL,
        |inst| {
            let src = slice(bytes as *const u8, size, "serializedState")?;
            // Check it against this instance's model now, so a corrupt state fails here.
            inst.check_snapshot(src)?;
            let slot = out(state, "FMUstate")?;
            match (*slot as *mut FmuState).as_mut() {
                Some(existing) => existing.bytes = src.to_vec(),
                None => {
                    *slot = Box::into_raw(Box::new(FmuState {
                        bytes: src.to_vec(),
                    })) as *mut c_void
                }
            }
            Ok(OK)
        },
    )
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn set_real_input_derivatives<M: Model>(
    c: *mut c_void,
    vr: *const u32,
    n: usize,
    order: *const c_int,
    v: *const f64,
) -> Status {
    call::<M>(c, "fmi2SetRealInputDerivatives", allowed::SET, |inst| {
        inst.set_input_derivatives(
            slice(vr, n, "vr")?,
            slice(order, n, "order")?,
            slice(v, n, "value")?,
        )
    })
}

/// Unsupported features: a logged fmi2Error (an empty request is trivially fine).
/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn unsupported<M: Model>(c: *mut c_void, function: &str, n: usize, why: &str) -> Status {
    call::<M>(c, function, allowed::ANY_BUT_FATAL, |_| {
        if n == 0 {
            Ok(OK)
        } else {
            Err(why.to_string())
        }
    })
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn do_step<M: Model>(c: *mut c_void, tc: f64, h: f64, _no_prior: c_int) -> Status {
    call::<M>(c, "fmi2DoStep", allowed::STEP_COMPLETE, |inst| {
        inst.do_step(tc, h)
    })
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn cancel_step<M: Model>(c: *mut c_void) -> Status {
    // doStep is synchronous: there is never a step in progress to cancel.
    call::<M>(c, "fmi2CancelStep", &[], |_| Ok(OK))
}

pub use fmi_abi::fmi2::EventInfo;

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn set_time<M: Model>(c: *mut c_void, t: f64) -> Status {
    call::<M>(c, "fmi2SetTime", allowed::SET_TIME, |inst| inst.set_time(t))
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn set_continuous_states<M: Model>(c: *mut c_void, x: *const f64, n: usize) -> Status {
    call::<M>(c, "fmi2SetContinuousStates", allowed::SET_STATES, |inst| {
        inst.set_continuous_states(slice(x, n, "x")?)
    })
}

/// fmi2GetContinuousStates, fmi2GetDerivatives, fmi2GetEventIndicators and
/// fmi2GetNominalsOfContinuousStates: an array of `n` values out.
/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_array<M: Model>(
    c: *mut c_void,
    function: &str,
    v: *mut f64,
    n: usize,
    get: impl FnOnce(&mut Instance<M>, &mut [f64]) -> CallResult,
) -> Status {
    call::<M>(c, function, allowed::GET_STATES, |inst| {
        get(inst, slice_mut(v, n, "values")?)
    })
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn enter_event_mode<M: Model>(c: *mut c_void) -> Status {
    call::<M>(c, "fmi2EnterEventMode", allowed::ENTER_EVENT_MODE, |inst| {
        inst.enter_event_mode();
        Ok(OK)
    })
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn enter_continuous_time_mode<M: Model>(c: *mut c_void) -> Status {
    call::<M>(
        c,
        "fmi2EnterContinuousTimeMode",
        allowed::EVENT_MODE,
        |inst| {
            inst.enter_continuous_time_mode();
            Ok(OK)
        },
    )
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn new_discrete_states<M: Model>(c: *mut c_void, info: *mut EventInfo) -> Status {
    call::<M>(c, "fmi2NewDiscreteStates", allowed::EVENT_MODE, |inst| {
        let info = out(info, "eventInfo")?;
        let e = inst.new_discrete_states()?;
        *info = EventInfo {
            new_discrete_states_needed: e.new_discrete_states_needed.into(),
            terminate_simulation: e.terminate_simulation.into(),
            nominals_of_continuous_states_changed: e.nominals_changed.into(),
            values_of_continuous_states_changed: e.values_of_continuous_states_changed.into(),
            next_event_time_defined: e.next_event_time.is_some().into(),
            next_event_time: e.next_event_time.unwrap_or(0.0),
        };
        Ok(OK)
    })
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn completed_integrator_step<M: Model>(
    c: *mut c_void,
    _no_prior: c_int,
    enter_event_mode: *mut c_int,
    terminate: *mut c_int,
) -> Status {
    call::<M>(
        c,
        "fmi2CompletedIntegratorStep",
        allowed::CONTINUOUS_TIME_MODE,
        |_| {
            // Every event is a state event the importer finds from the indicators (or a time
            // event it was told of): nothing to ask for after a step.
            *out(enter_event_mode, "enterEventMode")? = 0;
            *out(terminate, "terminateSimulation")? = 0;
            Ok(OK)
        },
    )
}

const LAST_SUCCESSFUL_TIME: c_int = 2;
const TERMINATED: c_int = 3;

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_real_status<M: Model>(c: *mut c_void, kind: c_int, v: *mut f64) -> Status {
    call::<M>(c, "fmi2GetRealStatus", allowed::STATUS, |inst| {
        if kind != LAST_SUCCESSFUL_TIME {
            return Ok(DISCARD);
        }
        *out(v, "value")? = inst.last_successful_time();
        Ok(OK)
    })
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_boolean_status<M: Model>(c: *mut c_void, kind: c_int, v: *mut c_int) -> Status {
    call::<M>(c, "fmi2GetBooleanStatus", allowed::STATUS, |_| {
        if kind != TERMINATED {
            return Ok(DISCARD);
        }
        // The slave never asks to end the simulation.
        *out(v, "value")? = 0;
        Ok(OK)
    })
}

/// fmi2GetStatus, fmi2GetIntegerStatus, fmi2GetStringStatus: they only describe asynchronous
/// steps, which never happen, so there is no value to give.
/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn no_status<M: Model>(c: *mut c_void, function: &str) -> Status {
    call::<M>(c, function, allowed::STATUS, |_| Ok(DISCARD))
}

/// For the xtask: modelDescription.xml (`what == 0`, stamped with `timestamp`) or
/// documentation/index.html (`what == 1`). Free the result with [`free_string`].
/// # Safety
/// `timestamp` is NULL or a C string.
pub unsafe fn describe<M: Model>(what: c_int, timestamp: *const c_char) -> *mut c_char {
    let result = catch_unwind(|| {
        let text = match what {
            0 => {
                let ts = match timestamp.as_ref() {
                    Some(_) => CStr::from_ptr(timestamp).to_string_lossy().into_owned(),
                    None => "1970-01-01T00:00:00Z".into(),
                };
                describe::model_description::<M>(&ts).to_xml()
            }
            1 => describe::documentation::<M>(),
            _ => return std::ptr::null_mut(),
        };
        CString::new(text).map_or(std::ptr::null_mut(), CString::into_raw)
    });
    result.unwrap_or(std::ptr::null_mut())
}

/// # Safety
/// `s` is NULL or came from [`describe`].
pub unsafe fn free_string(s: *mut c_char) {
    if !s.is_null() {
        drop(CString::from_raw(s));
    }
}

// The functions of types and features the FMUs do not have, and the Model Exchange arrays:
// each a call of the helper that refuses or fills them, under the function's own name.

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_boolean<M: Model>(
    c: *mut c_void,
    vr: *const u32,
    n: usize,
    _: *mut c_int,
) -> Status {
    no_such_type::<M>(c, "fmi2GetBoolean", allowed::GET, vr, n)
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_string<M: Model>(
    c: *mut c_void,
    vr: *const u32,
    n: usize,
    _: *mut *const c_char,
) -> Status {
    no_such_type::<M>(c, "fmi2GetString", allowed::GET, vr, n)
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn set_boolean<M: Model>(
    c: *mut c_void,
    vr: *const u32,
    n: usize,
    _: *const c_int,
) -> Status {
    no_such_type::<M>(c, "fmi2SetBoolean", allowed::SET, vr, n)
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn set_string<M: Model>(
    c: *mut c_void,
    vr: *const u32,
    n: usize,
    _: *const *const c_char,
) -> Status {
    no_such_type::<M>(c, "fmi2SetString", allowed::SET, vr, n)
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_directional_derivative<M: Model>(
    c: *mut c_void,
    _: *const u32,
    n_unknowns: usize,
    _: *const u32,
    n_knowns: usize,
    _: *const f64,
    _: *mut f64,
) -> Status {
    unsupported::<M>(
        c,
        "fmi2GetDirectionalDerivative",
        n_unknowns * n_knowns,
        "directional derivatives are not provided (providesDirectionalDerivative=false)",
    )
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_status<M: Model>(c: *mut c_void, _: c_int, _: *mut c_int) -> Status {
    no_status::<M>(c, "fmi2GetStatus")
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_integer_status<M: Model>(c: *mut c_void, _: c_int, _: *mut c_int) -> Status {
    no_status::<M>(c, "fmi2GetIntegerStatus")
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_string_status<M: Model>(
    c: *mut c_void,
    _: c_int,
    _: *mut *const c_char,
) -> Status {
    no_status::<M>(c, "fmi2GetStringStatus")
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_continuous_states<M: Model>(c: *mut c_void, x: *mut f64, n: usize) -> Status {
    get_array::<M>(c, "fmi2GetContinuousStates", x, n, |i, v| {
        i.get_continuous_states(v)
    })
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_derivatives<M: Model>(c: *mut c_void, dx: *mut f64, n: usize) -> Status {
    get_array::<M>(c, "fmi2GetDerivatives", dx, n, |i, v| i.get_derivatives(v))
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_event_indicators<M: Model>(c: *mut c_void, z: *mut f64, n: usize) -> Status {
    get_array::<M>(c, "fmi2GetEventIndicators", z, n, |i, v| {
        i.get_event_indicators(v)
    })
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_nominals_of_continuous_states<M: Model>(
    c: *mut c_void,
    x: *mut f64,
    n: usize,
) -> Status {
    get_array::<M>(c, "fmi2GetNominalsOfContinuousStates", x, n, |i, v| {
        i.get_nominals(v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_models::Ball;

    #[test]
    fn a_panic_becomes_fatal_and_the_instance_then_refuses_calls() {
        let logger = Logger::new(None, std::ptr::null_mut(), "p", false);
        let c = Box::into_raw(Box::new(Instance::<Ball>::new(
            logger,
            Interface::CoSimulation,
        ))) as *mut c_void;
        unsafe {
            let status = call::<Ball>(c, "fmi2Test", allowed::ANY_BUT_FATAL, |_| panic!("boom"));
            assert_eq!(status, FATAL);
            assert_eq!((*(c as *mut Instance<Ball>)).state, FmiState::Fatal);
            assert_eq!(reset::<Ball>(c), ERROR);
            free_instance::<Ball>(c);
        }
    }
}
