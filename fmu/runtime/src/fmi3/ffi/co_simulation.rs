//! The C ABI of what only Co-Simulation has: stepping, Step Mode, output derivatives.

use super::*;

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn enter_step_mode<M: Model>(c: *mut c_void) -> Status {
    call::<M>(c, "fmi3EnterStepMode", allowed::EVENT_MODE, |inst| {
        inst.core.enter_step_mode();
        Ok(OK)
    })
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn get_output_derivatives<M: Model>(
    c: *mut c_void,
    vr: *const ValueReference,
    n: usize,
    orders: *const i32,
    v: *mut f64,
    n_values: usize,
) -> Status {
    call::<M>(c, "fmi3GetOutputDerivatives", allowed::GET, |inst| {
        scalars(n, n_values)?;
        inst.core.get_output_derivatives(
            slice(vr, n, "valueReferences")?,
            slice(orders, n, "orders")?,
            slice_mut(v, n, "values")?,
        )
    })
}

/// # Safety
/// FMI 3.0 pointer rules.
#[allow(clippy::too_many_arguments)]
pub unsafe fn do_step<M: Model>(
    c: *mut c_void,
    tc: f64,
    h: f64,
    _no_prior: bool,
    event_handling_needed: *mut bool,
    terminate_simulation: *mut bool,
    early_return: *mut bool,
    last_successful_time: *mut f64,
) -> Status {
    call::<M>(c, "fmi3DoStep", allowed::STEP_COMPLETE, |inst| {
        let outs = (
            out(event_handling_needed, "eventHandlingNeeded")?,
            out(terminate_simulation, "terminateSimulation")?,
            out(early_return, "earlyReturn")?,
            out(last_successful_time, "lastSuccessfulTime")?,
        );
        let result = inst.do_step(tc, h);
        // Also after a failed step: the time the instance holds.
        *outs.3 = inst.core.last_successful_time;
        *outs.1 = false;
        let outcome = result?;
        *outs.0 = outcome.event_handling_needed;
        *outs.2 = outcome.early_return;
        *outs.3 = outcome.last_successful_time;
        Ok(OK)
    })
}
