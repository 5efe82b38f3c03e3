//! An FMI 3.0 instance: the shared core plus what FMI 3.0 Co-Simulation adds, the importer's
//! choice of Event Mode and early return and its intermediate update callback.
//!
//! - Without Event Mode, `fmi3DoStep` handles events inside the step exactly as `fmi2DoStep`
//!   does: the same integrator on the same calls, so results are bit-identical to the FMI 2.0
//!   FMU.
//! - With Event Mode and early return allowed, `fmi3DoStep` ends at the first state or time
//!   event inside the step, before the model's event update, with `eventHandlingNeeded` and
//!   `lastSuccessfulTime` at the event; the importer's `fmi3EnterEventMode`,
//!   `fmi3UpdateDiscreteStates` (the same event update the step would have run) and
//!   `fmi3EnterStepMode` handle it. Without early return the FMU cannot stop inside the step
//!   and handles events there itself, as without Event Mode.
//! - The intermediate update callback is called at the end of every accepted internal step
//!   that ends inside the communication step, not at the one that ends at its end (the
//!   importer has the communication point for that), with `intermediateStepFinished` and
//!   `canReturnEarly` when early return is allowed. FMI 3.0.2 section 4.2.2 leaves when to the
//!   FMU ("an FMU may enter" Intermediate Update Mode), within [tc, tc + h]. An early return
//!   requested there ends the step at that internal step's end, or, for an `earlyReturnTime`
//!   later in the step, at that time (integrated to it as to a communication point), with
//!   `earlyReturn = true`.
//! - A call the callback makes that Intermediate Update Mode does not allow returns fmi3Error
//!   with a logged reason and changes nothing; the step goes on and ends as it would have. The
//!   callback returns nothing the FMU could fail on, and the standard sets no rule for a
//!   refusal there: the importer has the status of its own call.
//! - Without intermediate variables required at instantiation, the callback is called from
//!   inside the integrator: nothing changes for a step, and every call made from the callback
//!   is refused. With some ([`super::intermediate`]), the step pauses at the end of each
//!   accepted internal step and the C ABI calls the callback there ([`Progress::Update`]):
//!   the instance is at that time, its outputs computed, so gets read it, and inputs set there
//!   hold from there to the end of the step: the integration restarts from that point, as at a
//!   communication point (the step size carries over). With nothing set (or an input set to
//!   its own value) it goes on as if it had not paused: the method's state (BDF's order and
//!   history), the working copy and the input ramps are kept (`Instance::step_to`).

use super::intermediate::{Access, Required, Window};
use crate::instance::Instance;
use crate::model::Model;
use crate::ode::segment::{time_epsilon, MAX_INTERNAL_STEPS};
use crate::ode::{Ended, Stops};
use fmi_abi::fmi3::{Environment, IntermediateUpdate};
use std::cell::Cell;

pub struct Instance3<M: Model> {
    pub core: Instance<M>,
    pub early_return_allowed: bool,
    pub intermediate_update: Option<IntermediateUpdate>,
    pub env: Environment,
    /// The intermediate variables required at instantiation, if any.
    pub intermediate: Option<Required>,
    /// Inside the intermediate update callback: what the importer may do there.
    pub window: Option<Window>,
}

/// How far a communication step with intermediate variables got.
#[derive(Clone, Copy)]
pub enum Progress {
    /// Paused at the end of an accepted internal step: the callback is due.
    Update(Due),
    /// Ended so.
    Done(StepOutcome),
}

/// An intermediate update callback the C ABI is to make.
#[derive(Clone, Copy)]
pub struct Due {
    pub callback: IntermediateUpdate,
    pub env: Environment,
    pub time: f64,
    pub set_requested: bool,
    pub can_return_early: bool,
    /// The end of the communication step.
    pub t_end: f64,
    /// Callbacks made in this step so far.
    pub count: usize,
}

/// What `fmi3DoStep` reports besides its status.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepOutcome {
    pub event_handling_needed: bool,
    pub early_return: bool,
    pub last_successful_time: f64,
}

impl<M: Model> Instance3<M> {
    /// A step without intermediate variables; `access` is the handle's, marked
    /// [`Access::Sealed`] while the callback runs.
    pub fn do_step(
        &mut self,
        tc: f64,
        h: f64,
        access: &Cell<Access>,
    ) -> Result<StepOutcome, String> {
        let (callback, env, early) = (
            self.intermediate_update,
            self.env,
            self.early_return_allowed,
        );
        // The time the importer asked to return at, if it asked.
        let mut requested: Option<f64> = None;
        let mut ask = |t: f64| -> bool {
            let Some(callback) = callback else {
                return false;
            };
            let (mut wants, mut at) = (false, t);
            access.set(Access::Sealed);
            unsafe { callback(env, t, false, false, true, early, &mut wants, &mut at) };
            access.set(Access::Busy);
            if early && wants {
                requested = Some(if at.is_finite() { at } else { t });
            }
            early && wants
        };
        let stops = Stops {
            at_events: self.core.event_mode_used && early,
            pause: if callback.is_some() {
                Some(&mut ask)
            } else {
                None
            },
        };
        let mut ended = self.core.step_with(tc, h, stops)?;
        if let (Ended::Paused(t), Some(at)) = (ended, requested) {
            ended = self.go_on_to(t, at, tc + h)?;
        }
        Ok(self.outcome(ended, tc + h))
    }

    /// The start of a step with intermediate variables: to the end of its first accepted
    /// internal step, or further where it has none.
    pub fn start_step(&mut self, tc: f64, h: f64) -> Result<Progress, String> {
        let t_end = self.core.step_end(tc, h)?;
        self.step_to_update(t_end, 0)
    }

    /// After the callback `due` answered (`early`: the early return it asked for): the step
    /// ends there or at the time asked, or goes on to its next internal step's end.
    pub fn after_update(&mut self, due: &Due, early: Option<f64>) -> Result<Progress, String> {
        self.window = None;
        if let Some(at) = early {
            let ended = self.go_on_to(due.time, at, due.t_end)?;
            return Ok(Progress::Done(self.outcome(ended, due.t_end)));
        }
        // A pause per internal step resets the integrator's own count of them: an input far
        // outside what the model is made for must still end the step rather than hang it.
        if due.count > MAX_INTERNAL_STEPS {
            return self.core.failed(format!(
                "t = {}: more than {MAX_INTERNAL_STEPS} internal steps in one communication step: are the inputs sensible?",
                due.time
            ));
        }
        self.step_to_update(due.t_end, due.count)
    }

    /// From the instance's time toward `t_end`, pausing at the end of the first accepted
    /// internal step; `count`: the callbacks made in this step so far.
    fn step_to_update(&mut self, t_end: f64, count: usize) -> Result<Progress, String> {
        let mut pause = |_: f64| true;
        let stops = Stops {
            at_events: self.core.event_mode_used && self.early_return_allowed,
            pause: Some(&mut pause),
        };
        let t = self.core.time;
        let ended = self.core.step_to(t, t_end, stops)?;
        match (ended, self.intermediate_update) {
            (Ended::Paused(time), Some(callback)) => {
                let set_requested = self.intermediate.as_ref().is_some_and(|r| r.inputs);
                self.window = Some(Window {
                    get_allowed: true,
                    set_requested,
                    set_made: false,
                });
                Ok(Progress::Update(Due {
                    callback,
                    env: self.env,
                    time,
                    set_requested,
                    can_return_early: self.early_return_allowed,
                    t_end,
                    count: count + 1,
                }))
            }
            (ended, _) => Ok(Progress::Done(self.outcome(ended, t_end))),
        }
    }

    /// An early return asked for a time `at` later in the step than the internal step's end
    /// `t`: integrate on to it, as to a communication point.
    fn go_on_to(&mut self, t: f64, at: f64, t_end: f64) -> Result<Ended, String> {
        let epsilon = time_epsilon(at);
        if !(at > t + epsilon && at < t_end - epsilon) {
            return Ok(Ended::Paused(t));
        }
        let stops = Stops {
            at_events: self.core.event_mode_used,
            pause: None,
        };
        Ok(match self.core.step_with(t, at - t, stops)? {
            Ended::Reached => Ended::Paused(at),
            other => other,
        })
    }

    /// What `fmi3DoStep` reports for a step that ended so.
    fn outcome(&self, ended: Ended, t_end: f64) -> StepOutcome {
        let time = self.core.last_successful_time;
        match ended {
            Ended::Reached => StepOutcome {
                last_successful_time: time,
                ..StepOutcome::default()
            },
            // An event found at the end of the step ends it there: no early return, but the
            // event still wants its Event Mode.
            Ended::Event(_) => StepOutcome {
                event_handling_needed: true,
                early_return: time < t_end,
                last_successful_time: time,
            },
            Ended::Paused(_) => StepOutcome {
                event_handling_needed: false,
                early_return: true,
                last_successful_time: time,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instance::Interface;
    use crate::lift::Equations;
    use crate::logger::Logger;
    use crate::model::{Experiment, Invalid};
    use crate::{Jet, Scalar};

    /// x' = v = -x.
    #[derive(Debug, Clone, crate::Variables)]
    struct Decay<S = f64> {
        #[output(state, derivative = "v", start = 1.0)]
        x: S,
        #[output]
        v: S,
    }

    impl<S: Scalar> Equations<S> for Decay<S> {
        fn derivatives(&self, _t: f64, dx: &mut [S]) {
            dx[0] = -self.x;
        }
        fn outputs(&mut self, _t: f64) {
            self.v = -self.x;
        }
    }

    impl Model for Decay {
        const NAME: &'static str = "Decay";
        const DESCRIPTION: &'static str = "";
        const DOCUMENTATION: &'static str = "";
        const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0);
        fn initialize(&mut self, _t: f64) -> Result<(), Invalid> {
            Ok(())
        }
        type Jets = Decay<Jet<1>>;
    }

    /// Never called: the C ABI calls the callback, the core only pauses for it.
    unsafe extern "C" fn no_callback(
        _: Environment,
        _: f64,
        _: bool,
        _: bool,
        _: bool,
        _: bool,
        _: *mut bool,
        _: *mut f64,
    ) {
    }

    /// A step with intermediate variables, paused at every internal step's end and resumed,
    /// that reaches its end reports that end as its last successful time, with no early return
    /// and no event.
    #[test]
    fn a_step_that_reaches_its_end_says_so() {
        let logger = Logger::new(None, std::ptr::null_mut(), "t", false);
        let mut core = Instance::<Decay>::new(logger, Interface::CoSimulation);
        core.setup_experiment(None, 0.0, None).unwrap();
        core.enter_initialization_mode();
        core.exit_initialization_mode().unwrap();
        let required = Required::new(&core.vars, &[0]).unwrap();
        let mut inst = Instance3 {
            core,
            early_return_allowed: false,
            intermediate_update: Some(no_callback),
            env: std::ptr::null_mut(),
            intermediate: Some(required),
            window: None,
        };
        let mut progress = inst.start_step(0.0, 1.0).unwrap();
        let mut pauses = 0;
        while let Progress::Update(due) = progress {
            pauses += 1;
            progress = inst.after_update(&due, None).unwrap();
        }
        let Progress::Done(outcome) = progress else {
            unreachable!()
        };
        assert!(pauses > 1, "{pauses} pauses");
        assert_eq!(outcome.last_successful_time, 1.0);
        assert!(!outcome.early_return && !outcome.event_handling_needed);
    }
}
