//! The C ABI: every fmi2* function of the Co-Simulation and Model Exchange interfaces, generic
//! over the model.
//! [`export_fmu!`](crate::export_fmu) instantiates them with `#[no_mangle]` names in a
//! component crate. What only one interface has is in `co_simulation` and
//! `model_exchange`; FMU states in `fmu_state`.
//!
//! Every entry point checks its pointers, checks the call against the state machine, and runs
//! the call inside `catch_unwind`: a panic becomes fmi2Fatal for that instance, never an unwind
//! into the importer. The instance is the only state; there is nothing global.

use crate::instance::call::{self, guarded, Version};
use crate::instance::{allowed, CallResult, FmiState, Instance, Interface};
use crate::logger::{CallbackFunctions, Category, Logger, Status, DISCARD, ERROR, OK};
use crate::model::Model;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::panic::catch_unwind;

const MODEL_EXCHANGE: c_int = 0;
const CO_SIMULATION: c_int = 1;

mod co_simulation;
pub(crate) mod fmu_state;
mod model_exchange;
pub(crate) use crate::abi::{
    check_instantiation, directional_at_once, out, slice, slice_mut, text,
};
pub use co_simulation::*;
pub use fmu_state::*;
pub use model_exchange::*;

/// Runs `f` on the instance behind `c` if `function` is allowed in its state.
#[inline(always)]
unsafe fn call<M: Model>(
    c: *mut c_void,
    function: &str,
    states: &[FmiState],
    f: impl FnOnce(&mut Instance<M>) -> CallResult,
) -> Status {
    match (c as *mut Instance<M>).as_mut() {
        Some(instance) => guarded(instance, function, states, Version::Fmi2, f),
        None => ERROR,
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
        let name = text(instance_name).unwrap_or_default();
        let logger = Logger::new(callback, env, &name, logging_on != 0);
        let fail = |msg: &str| {
            logger.log(ERROR, Category::Error, &format!("fmi2Instantiate: {msg}"));
            std::ptr::null_mut()
        };
        if let Err(e) = check_instantiation::<M>(&name, text(guid), "fmuGUID") {
            return fail(&e);
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
    call::<M>(c, function, states, |_| {
        call::no_such_type(slice(vr, n, "vr")?, "Real and Integer")
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

/// Unsupported features: a logged fmi2Error (an empty request is trivially fine).
/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn unsupported<M: Model>(c: *mut c_void, function: &str, n: usize, why: &str) -> Status {
    call::<M>(c, function, allowed::ANY_BUT_FATAL, |_| {
        call::unsupported(n, why)
    })
}

pub use fmi_abi::fmi2::EventInfo;

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
    unknowns: *const u32,
    n_unknowns: usize,
    knowns: *const u32,
    n_knowns: usize,
    seed: *const f64,
    sensitivity: *mut f64,
) -> Status {
    const FUNCTION: &str = "fmi2GetDirectionalDerivative";
    if !M::PROVIDES_DERIVATIVES {
        return unsupported::<M>(
            c,
            FUNCTION,
            n_unknowns * n_knowns,
            "directional derivatives are not provided (providesDirectionalDerivative=false)",
        );
    }
    // A point already swept (every call after an importer's first there) is answered by reads
    // alone, the entry a leaf; anything else goes on by a tail call.
    if let Some(inst) = (c as *const Instance<M>).as_ref() {
        if crate::abi::swept_at_once(
            inst,
            unknowns,
            n_unknowns,
            knowns,
            n_knowns,
            seed,
            sensitivity,
        ) {
            return OK;
        }
    }
    directional_not_swept::<M>(c, unknowns, n_unknowns, knowns, n_knowns, seed, sensitivity)
}

/// [`get_directional_derivative`] at the first call at a point: swept and read ahead of the
/// call's guard where it can be, through the guard otherwise.
#[inline(never)]
unsafe extern "C" fn directional_not_swept<M: Model>(
    c: *mut c_void,
    unknowns: *const u32,
    n_unknowns: usize,
    knowns: *const u32,
    n_knowns: usize,
    seed: *const f64,
    sensitivity: *mut f64,
) -> Status {
    if let Some(inst) = (c as *mut Instance<M>).as_mut() {
        if directional_at_once(
            inst,
            unknowns,
            n_unknowns,
            knowns,
            n_knowns,
            seed,
            sensitivity,
        ) {
            return OK;
        }
    }
    directional_in_full::<M>(c, unknowns, n_unknowns, knowns, n_knowns, seed, sensitivity)
}

/// [`get_directional_derivative`] through the call's guard: out of line, so that the answer
/// at once keeps a small frame.
#[cold]
#[inline(never)]
unsafe fn directional_in_full<M: Model>(
    c: *mut c_void,
    unknowns: *const u32,
    n_unknowns: usize,
    knowns: *const u32,
    n_knowns: usize,
    seed: *const f64,
    sensitivity: *mut f64,
) -> Status {
    const FUNCTION: &str = "fmi2GetDirectionalDerivative";
    call::<M>(c, FUNCTION, allowed::DERIVATIVES, |inst| {
        let status = inst.directional_derivative(
            slice(unknowns, n_unknowns, "vUnknown_ref")?,
            slice(knowns, n_knowns, "vKnown_ref")?,
            slice(seed, n_knowns, "dvKnown")?,
            slice_mut(sensitivity, n_unknowns, "dvUnknown")?,
        )?;
        // FMI 2.0.4 section 2.1.3 allows fmi2Discard only where a function's text defines it,
        // which fmi2GetDirectionalDerivative's does not: where the derivatives are not defined
        // (logged with the reason) the call fails as a refused one does, changing nothing.
        if status == crate::logger::DISCARD {
            return Err(format!(
                "t = {}: the directional derivatives are not defined here (see the warning above)",
                inst.time
            ));
        }
        Ok(status)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logger::FATAL;
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
