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
//!   (`intermediateStepFinished`, `canReturnEarly` when early return is allowed). An early
//!   return requested there ends the step at that internal step's end, or, for an
//!   `earlyReturnTime` later in the step, at that time (integrated to it as to a
//!   communication point), with `earlyReturn = true`. No variable may be read or set inside
//!   the callback (none is declared `intermediateUpdate`); a call made from it is refused.

use crate::instance::Instance;
use crate::model::Model;
use crate::ode::segment::time_epsilon;
use crate::ode::{Ended, Stops};
use fmi_abi::fmi3::{Environment, IntermediateUpdate};

pub struct Instance3<M: Model> {
    pub core: Instance<M>,
    pub early_return_allowed: bool,
    pub intermediate_update: Option<IntermediateUpdate>,
    pub env: Environment,
}

/// What `fmi3DoStep` reports besides its status.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepOutcome {
    pub event_handling_needed: bool,
    pub early_return: bool,
    pub last_successful_time: f64,
}

impl<M: Model> Instance3<M> {
    pub fn do_step(&mut self, tc: f64, h: f64) -> Result<StepOutcome, String> {
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
            unsafe { callback(env, t, false, false, true, early, &mut wants, &mut at) };
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
