//! The C ABI of what only Model Exchange has: time, continuous states, derivatives, event
//! indicators and the event iteration.

use super::*;

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
        inst.enter_event_mode()?;
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
