//! The C ABI of what only Co-Simulation has: stepping, Step Mode, output derivatives.

use super::*;
use crate::fmi3::instance::{Due, Progress, StepOutcome};

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
        let vrs = slice(vr, n, "valueReferences")?;
        inst.intermediate_access(Use::Get, vrs)?;
        inst.core.get_output_derivatives(
            vrs,
            slice(orders, n, "orders")?,
            slice_mut(v, n, "values")?,
        )
    })
}

/// The output arguments of `fmi3DoStep`.
#[derive(Clone, Copy)]
struct StepOuts {
    event_handling_needed: *mut bool,
    terminate_simulation: *mut bool,
    early_return: *mut bool,
    last_successful_time: *mut f64,
}

impl StepOuts {
    /// Checked for NULL before the step.
    unsafe fn check(self) -> Result<(), String> {
        out(self.event_handling_needed, "eventHandlingNeeded")?;
        out(self.terminate_simulation, "terminateSimulation")?;
        out(self.early_return, "earlyReturn")?;
        out(self.last_successful_time, "lastSuccessfulTime")?;
        Ok(())
    }

    /// Where a step got: `result`, or the time the instance holds after a failed one.
    unsafe fn write(self, time: f64, result: &Result<StepOutcome, String>) {
        *self.last_successful_time = time;
        *self.terminate_simulation = false;
        if let Ok(outcome) = result {
            *self.event_handling_needed = outcome.event_handling_needed;
            *self.early_return = outcome.early_return;
            *self.last_successful_time = outcome.last_successful_time;
        }
    }
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
    let Some(handle) = (c as *const Handle<M>).as_ref() else {
        return ERROR;
    };
    let outs = StepOuts {
        event_handling_needed,
        terminate_simulation,
        early_return,
        last_successful_time,
    };
    let mut due = None;
    let mut status = call::<M>(c, "fmi3DoStep", allowed::STEP_COMPLETE, |inst| {
        outs.check()?;
        if inst.intermediate.is_none() {
            let result = inst.do_step(tc, h, &handle.access);
            outs.write(inst.core.last_successful_time, &result);
            return result.map(|_| OK);
        }
        let progress = inst.start_step(tc, h);
        reached(inst, progress, outs, &mut due)
    });
    // With intermediate variables the step pauses at each internal step's end, and the
    // callback is made here, where no call holds the instance: the importer's gets and sets
    // reach it.
    while let Some(update) = due.take() {
        let early = intermediate_update(handle, &update);
        status = call::<M>(c, "fmi3DoStep", allowed::STEP_COMPLETE, |inst| {
            let progress = inst.after_update(&update, early);
            reached(inst, progress, outs, &mut due)
        });
    }
    status
}

/// Reports where a step with intermediate variables got: done, or paused with a callback due.
unsafe fn reached<M: Model>(
    inst: &mut Instance3<M>,
    progress: Result<Progress, String>,
    outs: StepOuts,
    due: &mut Option<Due>,
) -> CallResult {
    let result = progress.map(|p| match p {
        Progress::Update(update) => {
            *due = Some(update);
            StepOutcome::default()
        }
        Progress::Done(outcome) => outcome,
    });
    if result.is_err() {
        inst.window = None;
    }
    outs.write(inst.core.last_successful_time, &result);
    result.map(|_| OK)
}

/// Calls the importer's intermediate update callback for `due`, the instance open to the calls
/// of Intermediate Update Mode; the early return it asked for, if any.
unsafe fn intermediate_update<M: Model>(handle: &Handle<M>, due: &Due) -> Option<f64> {
    let (mut wants, mut at) = (false, due.time);
    handle.access.set(Access::Open);
    (due.callback)(
        due.env,
        due.time,
        due.set_requested,
        true,
        true,
        due.can_return_early,
        &mut wants,
        &mut at,
    );
    handle.access.set(Access::Free);
    (due.can_return_early && wants).then_some(if at.is_finite() { at } else { due.time })
}
