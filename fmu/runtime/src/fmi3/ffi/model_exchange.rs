//! The C ABI of Model Exchange (and the event update both interfaces share): time,
//! continuous states, derivatives, event indicators, Event Mode.

use super::*;

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn update_discrete_states<M: Model>(
    c: *mut c_void,
    discrete_states_need_update: *mut bool,
    terminate_simulation: *mut bool,
    nominals_changed: *mut bool,
    values_changed: *mut bool,
    next_event_time_defined: *mut bool,
    next_event_time: *mut f64,
) -> Status {
    call::<M>(c, "fmi3UpdateDiscreteStates", allowed::EVENT_MODE, |inst| {
        let outs = (
            out(discrete_states_need_update, "discreteStatesNeedUpdate")?,
            out(terminate_simulation, "terminateSimulation")?,
            out(nominals_changed, "nominalsOfContinuousStatesChanged")?,
            out(values_changed, "valuesOfContinuousStatesChanged")?,
            out(next_event_time_defined, "nextEventTimeDefined")?,
            out(next_event_time, "nextEventTime")?,
        );
        let e = inst.core.new_discrete_states()?;
        *outs.0 = e.new_discrete_states_needed;
        *outs.1 = e.terminate_simulation;
        *outs.2 = e.nominals_changed;
        *outs.3 = e.values_of_continuous_states_changed;
        *outs.4 = e.next_event_time.is_some();
        *outs.5 = e.next_event_time.unwrap_or(0.0);
        Ok(OK)
    })
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn enter_continuous_time_mode<M: Model>(c: *mut c_void) -> Status {
    call::<M>(
        c,
        "fmi3EnterContinuousTimeMode",
        allowed::EVENT_MODE,
        |inst| {
            inst.core.enter_continuous_time_mode();
            Ok(OK)
        },
    )
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn completed_integrator_step<M: Model>(
    c: *mut c_void,
    _no_prior: bool,
    enter_event_mode: *mut bool,
    terminate: *mut bool,
) -> Status {
    call::<M>(
        c,
        "fmi3CompletedIntegratorStep",
        allowed::CONTINUOUS_TIME_MODE,
        |_| {
            // Every event is a state event the importer finds from the indicators, or a time
            // event it was told of: nothing to ask for after a step.
            *out(enter_event_mode, "enterEventMode")? = false;
            *out(terminate, "terminateSimulation")? = false;
            Ok(OK)
        },
    )
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn set_time<M: Model>(c: *mut c_void, t: f64) -> Status {
    call::<M>(c, "fmi3SetTime", allowed::SET_TIME, |inst| {
        inst.core.set_time(t)
    })
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn set_continuous_states<M: Model>(c: *mut c_void, x: *const f64, n: usize) -> Status {
    call::<M>(c, "fmi3SetContinuousStates", allowed::SET_STATES, |inst| {
        inst.core
            .set_continuous_states(slice(x, n, "continuousStates")?)
    })
}

/// An array of `n` values out, in the states where the core's getters answer.
unsafe fn get_array<M: Model>(
    c: *mut c_void,
    function: &str,
    v: *mut f64,
    n: usize,
    get: impl FnOnce(&mut Instance<M>, &mut [f64]) -> CallResult,
) -> Status {
    call::<M>(c, function, allowed::GET_STATES, |inst| {
        get(&mut inst.core, slice_mut(v, n, "values")?)
    })
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn get_continuous_state_derivatives<M: Model>(
    c: *mut c_void,
    dx: *mut f64,
    n: usize,
) -> Status {
    get_array::<M>(c, "fmi3GetContinuousStateDerivatives", dx, n, |i, v| {
        i.get_derivatives(v)
    })
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn get_event_indicators<M: Model>(c: *mut c_void, z: *mut f64, n: usize) -> Status {
    get_array::<M>(c, "fmi3GetEventIndicators", z, n, |i, v| {
        i.get_event_indicators(v)
    })
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn get_continuous_states<M: Model>(c: *mut c_void, x: *mut f64, n: usize) -> Status {
    get_array::<M>(c, "fmi3GetContinuousStates", x, n, |i, v| {
        i.get_continuous_states(v)
    })
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn get_nominals_of_continuous_states<M: Model>(
    c: *mut c_void,
    x: *mut f64,
    n: usize,
) -> Status {
    get_array::<M>(c, "fmi3GetNominalsOfContinuousStates", x, n, |i, v| {
        i.get_nominals(v)
    })
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn get_number_of_event_indicators<M: Model>(c: *mut c_void, n: *mut usize) -> Status {
    call::<M>(
        c,
        "fmi3GetNumberOfEventIndicators",
        allowed::ANY_BUT_FATAL,
        |_| {
            *out(n, "nEventIndicators")? = M::EVENT_INDICATORS;
            Ok(OK)
        },
    )
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn get_number_of_continuous_states<M: Model>(c: *mut c_void, n: *mut usize) -> Status {
    call::<M>(
        c,
        "fmi3GetNumberOfContinuousStates",
        allowed::ANY_BUT_FATAL,
        |_| {
            *out(n, "nContinuousStates")? = M::STATES;
            Ok(OK)
        },
    )
}
