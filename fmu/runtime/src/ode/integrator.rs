//! Integration over one communication step, with state and time events located inside it.
//!
//! Non-stiff segments are integrated with an explicit Runge-Kutta pair ([`super::erk`]):
//! Tsitouras' 5(4) ([`super::tsit5`]); Verner's 6(5) ([`super::vern6`]) for a model that asks
//! for it from some tolerance down ([`Model::SIXTH_ORDER_FROM`]); Dormand and Prince's 8(5,3)
//! ([`super::dop853`]) at relative tolerances of [`super::pairs::HIGH_ORDER_FROM`] and below. One instance of
//! it lives as long as the integrator, its buffers sized once, so a step costs the stages and
//! allocates nothing. While the model reports itself stiff, a segment is integrated with
//! diffsol's BDF instead, built for that segment.
//!
//! What carries over from one segment to the next is the step size the method proposed last
//! (`h`): every segment starts from the model's states, with the derivative evaluated afresh
//! (inputs may jump at a communication point), so that `h`, the model's variables and the input
//! ramps are the whole integrator state, and an FMU state that holds them reproduces a step bit
//! for bit. (The step-size controller is an integral one, which remembers no earlier error.)
//!
//! A zero crossing of an event indicator is located on the dense output (Illinois-modified
//! secant, to a few hundred ulp of the time, as tested). The method then steps again from the
//! start of that step, with the crossing as its stop time, so the states at the event have the
//! accuracy of a step end rather than of the dense output. The model's event update is repeated
//! until no mode changes, and the integration goes on from there.

use super::bdf::{stiff, Stiff};
use super::erk::Erk;
use super::explicit::Explicit;
use super::pairs::explicit_pair;
use super::segment::{
    changes_mode, event_iteration, run, time_epsilon, Context, Inputs, Pause, Ramp, SegmentEnd,
    StepError, ATOL_PER_RTOL,
};
use crate::model::Model;
#[cfg(test)]
use crate::model::Side;
use std::cell::RefCell;
use std::rc::Rc;

/// Zero crossings one step may hold before the model is declared chattering.
pub const MAX_SEGMENTS: usize = 10_000;

/// Counters for the log and for benchmarks, and where the integration ended.
#[derive(Debug, Default, Clone, Copy)]
pub struct StepStats {
    pub state_events: usize,
    pub time_events: usize,
    pub ended: Ended,
}

/// Where [`Integrator::integrate_with`] ended.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub enum Ended {
    /// At the end of the step.
    #[default]
    Reached,
    /// At an event, before its update: the states and inputs are those at this time, the modes
    /// those before it (an importer's Event Mode runs the update).
    Event(f64),
    /// At the end of an internal step where the pause hook asked to stop.
    Paused(f64),
}

/// Where an integration may end early (FMI 3.0 Co-Simulation: Event Mode, early return).
#[derive(Default)]
pub struct Stops<'a> {
    /// End at the first event, before the model's event update.
    pub at_events: bool,
    pub pause: Pause<'a>,
}

/// The model's account of the event just handled, as a suffix for the log line.
fn described<M: Model>(model: &M, t: f64) -> String {
    model
        .describe_event(t)
        .map_or_else(String::new, |text| format!(": {text}"))
}

/// The integrator of one instance.
pub struct Integrator<M: Model> {
    context: Rc<RefCell<Context<M>>>,
    /// The explicit method, for non-stiff segments.
    rk: Erk,
    /// BDF on a diffsol problem built per segment, for stiff ones.
    bdf: Box<dyn Stiff>,
    rtol: f64,
    /// The states, between the solver and the model.
    x: Vec<f64>,
    /// The dense-output states at a crossing, should landing on it fail.
    fallback: Vec<f64>,
    /// Set by the instance before an integration: nothing (an input, a state) changed since
    /// the last one ended, so a stiff segment may go on with the BDF's order and history, and
    /// a non-stiff one that paused with the explicit method's state.
    pub continues: bool,
    /// Where the last segment paused (for an intermediate update), if it did.
    paused_at: Option<f64>,
}

impl<M: Model> Integrator<M> {
    pub fn new(rtol: f64) -> Self {
        let context = Rc::new(RefCell::new(Context {
            model: M::default(),
            inputs: Inputs {
                tc: 0.0,
                ramps: Vec::new(),
            },
            offset: vec![0.0; M::STATES],
            full: vec![0.0; M::STATES],
        }));
        let bdf = stiff(context.clone(), M::STATES, M::EVENT_INDICATORS, rtol);
        Integrator {
            context,
            rk: Erk::new(
                explicit_pair::<M>(rtol),
                M::STATES,
                M::EVENT_INDICATORS,
                rtol,
                rtol * ATOL_PER_RTOL,
            ),
            bdf,
            rtol,
            x: vec![0.0; M::STATES],
            fallback: vec![0.0; M::STATES],
            continues: false,
            paused_at: None,
        }
    }

    pub fn rtol(&self) -> f64 {
        self.rtol
    }

    /// Sets the input ramps of the step that starts at `tc`. Allocates only when more inputs
    /// have a derivative than ever before.
    pub fn set_inputs(&mut self, tc: f64, ramps: impl Iterator<Item = Ramp<M>>) {
        let mut c = self.context.borrow_mut();
        c.inputs.tc = tc;
        c.inputs.ramps.clear();
        c.inputs.ramps.extend(ramps);
    }

    /// Where the last segment paused (for an intermediate update), if it did.
    pub fn paused_at(&self) -> Option<f64> {
        self.paused_at
    }

    /// Sets the inputs of `model` to their values at `t` on the current ramps.
    pub fn apply_inputs(&self, model: &mut M, t: f64) {
        self.context.borrow().inputs.apply(model, t);
    }

    /// Integrates `model` from `t0` to `t1` with the inputs set by [`Integrator::set_inputs`].
    /// `h` is the step size the solver proposed last (NaN: none yet); it is updated.
    #[cfg(test)]
    pub fn integrate(
        &mut self,
        model: &mut M,
        t0: f64,
        t1: f64,
        h: &mut f64,
        log_event: Option<&mut dyn FnMut(&str)>,
    ) -> Result<StepStats, StepError> {
        self.integrate_with(model, t0, t1, h, log_event, Stops::default())
    }

    /// Integrates `model` from `t0` to `t1` with the inputs set by [`Integrator::set_inputs`],
    /// ending early where `stops` asks: the states, inputs and time reached are in `model` and
    /// `StepStats::ended`. `h` is the step size the solver proposed last (NaN: none yet); it is
    /// updated.
    pub fn integrate_with(
        &mut self,
        model: &mut M,
        t0: f64,
        t1: f64,
        h: &mut f64,
        log_event: Option<&mut dyn FnMut(&str)>,
        mut stops: Stops,
    ) -> Result<StepStats, StepError> {
        let mut log = EventLog(log_event);
        let mut stats = StepStats::default();
        let mut segments = 0;
        let mut t = t0;
        // Going on from a pause with nothing changed: no input jumped, so no mode to settle (an
        // event update there, at no crossing, would be one the run without the pause does not
        // make).
        let resumed = self.continues && self.paused_at == Some(t0);
        let mut restart = if resumed {
            false
        } else {
            self.settle(model, t0, t1, h, &mut log)?
        };
        // Only the first segment can go on from the last integration: the others follow events.
        let mut continues = std::mem::take(&mut self.continues) && !restart;
        while t1 - t > time_epsilon(t1) {
            let time_event = model.next_time_event(t).filter(|&te| te > t && te < t1);
            let t_stop = time_event.unwrap_or(t1);
            let pause = stops
                .pause
                .as_mut()
                .map(|p| &mut **p as &mut dyn FnMut(f64) -> bool);
            let end = self.segment(model, t, t_stop, h, restart, continues, pause)?;
            (restart, continues) = (false, false);
            t = match end {
                SegmentEnd::Paused(tp) => {
                    self.apply_inputs(model, tp);
                    stats.ended = Ended::Paused(tp);
                    return Ok(stats);
                }
                SegmentEnd::Reached => t_stop,
                SegmentEnd::Root(tr) => tr,
            };
            self.apply_inputs(model, t);
            let root = matches!(end, SegmentEnd::Root(_));
            if (root || time_event.is_some()) && stops.at_events {
                stats.ended = Ended::Event(t);
                return Ok(stats);
            }
            if root {
                if let Some(jumped) = self.state_event(model, t)? {
                    stats.state_events += 1;
                    log.write(|| format!("state event at t = {t}{}", described(model, t)));
                    restart = jumped;
                }
                segments += 1;
                if segments > MAX_SEGMENTS {
                    return Err(StepError::Solver(
                        t,
                        format!("more than {MAX_SEGMENTS} events in one step: the model chatters"),
                    ));
                }
            } else if time_event.is_some() {
                stats.time_events += 1;
                log.write(|| format!("time event at t = {t}{}", described(model, t)));
                restart = event_iteration(model, t)? > 0;
            }
        }
        Ok(stats)
    }

    /// Before the first segment, at the communication point `t0`: inputs may have jumped
    /// there, so the modes settle first, because a condition that is already true at the start
    /// of a segment is no zero crossing. Whether the solver starts afresh: after a mode change
    /// the step size learned before says little, and an indicator may start at zero; the
    /// solver then starts with a first step of its own estimate.
    fn settle(
        &mut self,
        model: &mut M,
        t0: f64,
        t1: f64,
        h: &mut f64,
        log: &mut EventLog,
    ) -> Result<bool, StepError> {
        self.apply_inputs(model, t0);
        let mut restart = event_iteration(model, t0)? > 0;
        if restart {
            log.write(|| {
                format!(
                    "mode change at the communication point t = {t0}{}",
                    described(model, t0)
                )
            });
        }
        if !(h.is_finite() && *h > 0.0) {
            *h = t1 - t0;
            restart = true;
        }
        Ok(restart)
    }

    /// The event update at a located crossing. `None`: it changed no mode (a crossing at
    /// rounding level is no event). `Some(jumped)`: whether the states jumped (an impact, a
    /// stop), which starts the step size afresh; an event that only switches a mode keeps it,
    /// and where the derivative jumped with it the error control shortens the next step.
    #[inline(always)]
    fn state_event(&mut self, model: &mut M, t: f64) -> Result<Option<bool>, StepError> {
        model.get_states(&mut self.x);
        if event_iteration(model, t)? == 0 {
            return Ok(None);
        }
        model.get_states(&mut self.fallback);
        Ok(Some(self.x != self.fallback))
    }

    /// Integrates from `t0` to `t1` or to the first crossing that changes a mode; leaves the
    /// states there in `model`. With `continues`, a stiff segment goes on with the BDF state
    /// the last one ended with at `t0`, in its coordinates (the angles' offsets kept).
    #[allow(clippy::too_many_arguments)]
    fn segment(
        &mut self,
        model: &mut M,
        t0: f64,
        t1: f64,
        h: &mut f64,
        restart: bool,
        continues: bool,
        pause: Pause,
    ) -> Result<SegmentEnd, StepError> {
        if M::STATES == 0 || t1 - t0 <= time_epsilon(t1) {
            // Nothing to integrate, but event indicators may still change sign with the inputs.
            return Ok(SegmentEnd::Reached);
        }
        model.get_states(&mut self.x);
        let stiff = model.stiff();
        let paused_at = self.paused_at.take();
        let continuing = continues
            && if stiff {
                self.bdf.can_continue(t0)
            } else {
                paused_at == Some(t0)
            };
        {
            // The integrators see the model's parameters, modes and inputs as they are now;
            // going on, nothing changed, and the working copy is as the last segment left it
            // (the warm starts of the iterations some models make are part of it).
            let mut c = self.context.borrow_mut();
            if !continuing {
                c.model.clone_from(model);
                c.offset.fill(0.0);
                for i in 0..M::STATES {
                    if M::is_angle(i) {
                        c.offset[i] = self.x[i];
                    }
                }
            }
            c.solver_states(&mut self.x);
        }
        let probe: &M = model;
        let (x, context) = (&mut self.x, &self.context);
        // Should diffsol panic (it unwraps some internal errors), or the model, that is a
        // failed step, not a broken instance: fmi2Error, and a rollback with fmi2SetFMUstate or
        // a reset recovers.
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if stiff {
                let mut changes =
                    |t: f64, x: &[f64]| changes_mode(probe, &mut context.borrow_mut(), t, x);
                self.bdf.run(t0, t1, x, h, &mut changes, pause, continuing)
            } else {
                let mut explicit = Explicit {
                    rk: &mut self.rk,
                    c: &mut context.borrow_mut(),
                    model: probe,
                    fallback: &mut self.fallback,
                    steps: 0,
                    proposal: f64::NAN,
                    resumes: continuing,
                };
                run(&mut explicit, t0, t1, x, h, restart, pause)
            }
        }));
        let end = run.unwrap_or_else(|panic| Err(solver_panicked(t0, panic.as_ref())))?;
        if let SegmentEnd::Paused(t) = end {
            self.paused_at = Some(t);
        }
        self.context.borrow().model_states(&mut self.x);
        model.set_states(&self.x);
        Ok(end)
    }
}

/// The event log of one integration: a message is only written when someone reads it, since
/// formatting a time costs more than the step it describes.
struct EventLog<'a>(Option<&'a mut dyn FnMut(&str)>);

impl EventLog<'_> {
    #[inline(always)]
    fn write(&mut self, text: impl FnOnce() -> String) {
        if let Some(log) = self.0.as_mut() {
            log(&text())
        }
    }
}

/// A panic inside the solver or the model, as a failed step.
#[cold]
fn solver_panicked(t0: f64, panic: &(dyn std::any::Any + Send)) -> StepError {
    let what = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("a panic");
    StepError::Solver(t0, format!("the integrator failed: {what}"))
}

/// One integration with a fresh integrator and no inputs, for the tests.
#[cfg(test)]
fn integrate<M: Model>(model: &mut M, t0: f64, t1: f64, rtol: f64) -> Result<StepStats, StepError> {
    let mut h = f64::NAN;
    Integrator::<M>::new(rtol).integrate(model, t0, t1, &mut h, None)
}

#[cfg(test)]
#[path = "integrator_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "integrator_scalar_tests.rs"]
mod scalar_tests;
