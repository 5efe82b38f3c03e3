//! The C ABI of what only Co-Simulation has: stepping, input and output derivatives, status.

use super::*;

/// `fmi2StatusKind` values the status getters answer.
const LAST_SUCCESSFUL_TIME: c_int = 2;
const TERMINATED: c_int = 3;

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
