//! Integration over one communication step, with state and time events located inside it.
//!
//! Non-stiff segments are integrated with an explicit Runge-Kutta pair ([`super::erk`]):
//! Tsitouras' 5(4) ([`super::tsit5`]); Verner's 6(5) ([`super::vern6`]) for a model that asks
//! for it from some tolerance down ([`Model::SIXTH_ORDER_FROM`]); Dormand and Prince's 8(5,3)
//! ([`super::dop853`]) at relative tolerances of [`HIGH_ORDER_FROM`] and below. One instance of
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

use super::bdf::{problem, Bdf, Rebuild, Stiff};
use super::erk::{self, Erk, Stepped};
use super::explicit::Explicit;
use super::methods::explicit_pair;
#[cfg(test)]
use crate::model::Side;
use crate::model::{Indicators, Invalid, Model};
use std::cell::RefCell;
use std::rc::Rc;

/// How many event updates in a row may change a mode before the event is declared chattering.
pub const MAX_EVENT_ITERATIONS: usize = 100;

/// Internal steps one segment may take before the step fails.
pub const MAX_INTERNAL_STEPS: usize = 100_000;

/// Zero crossings one step may hold before the model is declared chattering.
pub const MAX_SEGMENTS: usize = 10_000;

/// Absolute tolerance per unit of relative tolerance. States are not all O(1) in SI units (a
/// compliance angle of 1e-4 rad is typical), so the absolute part stays three decades below.
pub const ATOL_PER_RTOL: f64 = 1e-3;

#[derive(Debug)]
pub enum StepError {
    /// The model rejected its state or inputs during an event update.
    Invalid(f64, Invalid),
    /// The integrator or the event iteration failed.
    Solver(f64, String),
}

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

/// After each accepted internal step: its end time; `true` stops the integration there.
pub type Pause<'a> = Option<&'a mut dyn FnMut(f64) -> bool>;

/// Where an integration may end early (FMI 3.0 Co-Simulation: Event Mode, early return).
#[derive(Default)]
pub struct Stops<'a> {
    /// End at the first event, before the model's event update.
    pub at_events: bool,
    pub pause: Pause<'a>,
}

/// A time below which two instants are the same: segments shorter than this are not integrated.
pub fn time_epsilon(t: f64) -> f64 {
    1e-13 * t.abs().max(1.0)
}

/// Repeats the model's event update until nothing discrete changes; returns how many updates
/// changed something.
pub fn event_iteration<M: Model>(model: &mut M, t: f64) -> Result<usize, StepError> {
    for n in 0..MAX_EVENT_ITERATIONS {
        match model.event_update(t) {
            Ok(false) => return Ok(n),
            Ok(true) => continue,
            Err(e) => return Err(StepError::Invalid(t, e)),
        }
    }
    Err(StepError::Solver(
        t,
        format!("event iteration did not converge in {MAX_EVENT_ITERATIONS} updates"),
    ))
}

/// The model's account of the event just handled, as a suffix for the log line.
fn described<M: Model>(model: &M, t: f64) -> String {
    model
        .describe_event(t)
        .map_or_else(String::new, |text| format!(": {text}"))
}

/// An input following a ramp over a step: its setter, value at the step start, slope.
pub type Ramp<M> = (fn(&mut M, f64), f64, f64);

/// The inputs over one communication step: each ramp starts at `tc`.
pub struct Inputs<M> {
    tc: f64,
    ramps: Vec<Ramp<M>>,
}

impl<M> Inputs<M> {
    /// Sets the inputs of `model` to their values at `t`.
    pub fn apply(&self, model: &mut M, t: f64) {
        for (set, u, du) in &self.ramps {
            set(model, u + du * (t - self.tc));
        }
    }
}

/// What the integrators evaluate: a working copy of the model and the step's inputs.
///
/// The integrators integrate each angle state (see [`crate::declare::Variables::ANGLES`]) as its increment from
/// the segment's start, `offset`: its error is then controlled relative to the distance
/// travelled, not to an angle that grows without bound (at 1200 rad and a tolerance of 1e-8,
/// 1.2e-5 rad per step would pass, and a crank's speed paid for it).
pub struct Context<M> {
    pub(super) model: M,
    inputs: Inputs<M>,
    offset: Vec<f64>,
    /// The model's states: the solver's plus the offsets.
    full: Vec<f64>,
}

impl<M: Model> Context<M> {
    /// The working model at states `x` (the solver's) and time `t`. Called for every stage: the
    /// loops run to the constant `M::STATES`, so they unroll.
    #[inline(always)]
    pub(super) fn at(&mut self, x: &[f64], t: f64) -> &M {
        self.inputs.apply(&mut self.model, t);
        let (full, x, offset) = (
            &mut self.full[..M::STATES],
            &x[..M::STATES],
            &self.offset[..M::STATES],
        );
        for i in 0..M::STATES {
            full[i] = x[i] + offset[i];
        }
        self.model.set_states(full);
        &self.model
    }

    /// The solver's states from the model's: angles less their offsets.
    pub(super) fn solver_states(&self, x: &mut [f64]) {
        for (x, o) in x.iter_mut().zip(&self.offset) {
            *x -= o;
        }
    }

    /// The model's states from the solver's.
    fn model_states(&self, x: &mut [f64]) {
        for (x, o) in x.iter_mut().zip(&self.offset) {
            *x += o;
        }
    }
}

/// How a segment ended.
pub enum SegmentEnd {
    /// At its end time.
    Reached,
    /// At a zero crossing that changes a mode, at this time.
    Root(f64),
    /// At the end of an internal step where the pause hook asked to stop.
    Paused(f64),
}

/// A mode-changing test of a zero crossing: time and states there.
pub type ChangesMode<'a> = dyn FnMut(f64, &[f64]) -> bool + 'a;

/// Whether the event at `t`, states `x` (the solver's), changes a mode of `model`. An indicator
/// that merely touches zero (a root is reported wherever one is exactly 0) changes none: the
/// event is tried on a copy of the model.
pub fn changes_mode<M: Model>(model: &M, c: &mut Context<M>, t: f64, x: &[f64]) -> bool {
    let mut probe = model.clone();
    let Context {
        full,
        offset,
        inputs,
        ..
    } = c;
    for ((f, x), o) in full.iter_mut().zip(x).zip(offset.iter()) {
        *f = x + o;
    }
    probe.set_states(full);
    inputs.apply(&mut probe, t);
    !matches!(event_iteration(&mut probe, t), Ok(0))
}

impl<M: Model> erk::System for Context<M> {
    #[inline(always)]
    fn derivatives(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
        self.at(y, t).derivatives(t, dy)
    }

    fn indicators(&mut self, t: f64, y: &[f64], g: &mut [f64]) {
        self.at(y, t).event_indicators(t, &mut Indicators::new(g))
    }
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
        let shared = context.clone();
        let rebuild: Rebuild<_> = Box::new(move |t0, h0| problem(shared.clone(), rtol, t0, h0));
        Integrator {
            context,
            rk: Erk::new(
                explicit_pair::<M>(rtol),
                M::STATES,
                M::EVENT_INDICATORS,
                rtol,
                rtol * ATOL_PER_RTOL,
            ),
            bdf: Box::new(Bdf { rebuild }),
            rtol,
            x: vec![0.0; M::STATES],
            fallback: vec![0.0; M::STATES],
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

    /// [`Integrator::integrate`], ending early where `stops` asks: the states, inputs and
    /// time reached are in `model` and `StepStats::ended`.
    pub fn integrate_with(
        &mut self,
        model: &mut M,
        t0: f64,
        t1: f64,
        h: &mut f64,
        mut log_event: Option<&mut dyn FnMut(&str)>,
        mut stops: Stops,
    ) -> Result<StepStats, StepError> {
        // The message is only written when someone reads it: formatting a time costs more than
        // the step it describes.
        let mut log = |text: &dyn Fn() -> String| {
            if let Some(log) = log_event.as_mut() {
                log(&text())
            }
        };
        let mut stats = StepStats::default();
        let mut segments = 0;
        let mut t = t0;
        // Inputs may have jumped at the communication point: settle the modes first, because a
        // condition that is already true at the start of a segment is no zero crossing.
        self.apply_inputs(model, t);
        // After a mode change the step size learned before says little, and an indicator may
        // start at zero: the solver then starts with a first step of its own estimate.
        let mut restart = event_iteration(model, t)? > 0;
        if restart {
            log(&|| {
                format!(
                    "mode change at the communication point t = {t}{}",
                    described(model, t)
                )
            });
        }
        if !(h.is_finite() && *h > 0.0) {
            *h = t1 - t0;
            restart = true;
        }
        while t1 - t > time_epsilon(t1) {
            let time_event = model.next_time_event(t).filter(|&te| te > t && te < t1);
            let t_stop = time_event.unwrap_or(t1);
            let pause = stops
                .pause
                .as_mut()
                .map(|p| &mut **p as &mut dyn FnMut(f64) -> bool);
            let end = self.segment(model, t, t_stop, h, restart, pause)?;
            restart = false;
            match end {
                SegmentEnd::Paused(tp) => {
                    self.apply_inputs(model, tp);
                    stats.ended = Ended::Paused(tp);
                    return Ok(stats);
                }
                SegmentEnd::Reached => {
                    t = t_stop;
                    self.apply_inputs(model, t);
                    if time_event.is_some() && stops.at_events {
                        stats.ended = Ended::Event(t);
                        return Ok(stats);
                    }
                    if time_event.is_some() {
                        stats.time_events += 1;
                        log(&|| format!("time event at t = {t}{}", described(model, t)));
                        restart = event_iteration(model, t)? > 0;
                    }
                }
                SegmentEnd::Root(tr) => {
                    t = tr;
                    self.apply_inputs(model, t);
                    if stops.at_events {
                        stats.ended = Ended::Event(t);
                        return Ok(stats);
                    }
                    // A crossing at rounding level that changes no mode is no event.
                    model.get_states(&mut self.x);
                    if event_iteration(model, t)? > 0 {
                        stats.state_events += 1;
                        log(&|| format!("state event at t = {t}{}", described(model, t)));
                        // States that jumped (an impact, a stop) start the step size afresh. An
                        // event that only switches a mode keeps it: where the derivative jumped
                        // with it, the error control shortens the next step.
                        model.get_states(&mut self.fallback);
                        restart = self.x != self.fallback;
                    }
                    segments += 1;
                    if segments > MAX_SEGMENTS {
                        return Err(StepError::Solver(
                            t,
                            format!(
                                "more than {MAX_SEGMENTS} events in one step: the model chatters"
                            ),
                        ));
                    }
                }
            }
        }
        Ok(stats)
    }

    /// Integrates from `t0` to `t1` or to the first crossing that changes a mode; leaves the
    /// states there in `model`.
    fn segment(
        &mut self,
        model: &mut M,
        t0: f64,
        t1: f64,
        h: &mut f64,
        restart: bool,
        pause: Pause,
    ) -> Result<SegmentEnd, StepError> {
        if M::STATES == 0 || t1 - t0 <= time_epsilon(t1) {
            // Nothing to integrate, but event indicators may still change sign with the inputs.
            return Ok(SegmentEnd::Reached);
        }
        model.get_states(&mut self.x);
        {
            // The integrators see the model's parameters, modes and inputs as they are now.
            let mut c = self.context.borrow_mut();
            c.model.clone_from(model);
            c.offset.fill(0.0);
            for i in 0..M::STATES {
                if M::is_angle(i) {
                    c.offset[i] = self.x[i];
                }
            }
            c.solver_states(&mut self.x);
        }
        let stiff = model.stiff();
        let probe: &M = model;
        let (x, context) = (&mut self.x, &self.context);
        // Should diffsol panic (it unwraps some internal errors), or the model, that is a
        // failed step, not a broken instance: fmi2Error, and a rollback with fmi2SetFMUstate or
        // a reset recovers.
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if stiff {
                let mut changes =
                    |t: f64, x: &[f64]| changes_mode(probe, &mut context.borrow_mut(), t, x);
                self.bdf.run(t0, t1, x, h, &mut changes, pause)
            } else {
                let mut explicit = Explicit {
                    rk: &mut self.rk,
                    c: &mut context.borrow_mut(),
                    model: probe,
                    fallback: &mut self.fallback,
                    steps: 0,
                    proposal: f64::NAN,
                };
                run(&mut explicit, t0, t1, x, h, restart, pause)
            }
        }));
        let end = run.unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            Err(StepError::Solver(
                t0,
                format!("the integrator failed: {what}"),
            ))
        })?;
        self.context.borrow().model_states(&mut self.x);
        model.set_states(&self.x);
        Ok(end)
    }
}

/// What the segment loop ([`run`]) needs of an integration method; the explicit pairs
/// ([`super::explicit`]) and diffsol's BDF ([`super::bdf`]) implement it. `x` is the solver's
/// states (angles as increments, see [`Context`]); `h` the step size to propose to the next
/// segment, kept up to date.
pub trait Method {
    /// Starts the segment at `t0` from `x` toward `t1`, with trial step `h`; `restart`: estimate
    /// the first step afresh (after states jumped).
    fn start(
        &mut self,
        t0: f64,
        t1: f64,
        x: &[f64],
        h: &mut f64,
        restart: bool,
    ) -> Result<(), StepError>;
    /// Whether the segment is at its end before another step (then `x` holds the states).
    fn at_end(&mut self, t1: f64, x: &mut [f64], h: &mut f64) -> bool;
    /// One accepted step toward `t1`: inside the segment, at its end (states in `x`), or with a
    /// crossing of an indicator inside it.
    fn step(&mut self, t1: f64, x: &mut [f64], h: &mut f64) -> Result<Stepped, StepError>;
    /// The states at `t` inside the last step.
    fn interpolate(&mut self, t: f64, x: &mut [f64]) -> Result<(), StepError>;
    /// Whether the event at `t`, states `x`, changes a mode ([`changes_mode`]).
    fn changes_mode(&mut self, t: f64, x: &[f64]) -> bool;
    /// Settles on a mode-changing crossing found at `tr` (`x`: the interpolated states there):
    /// the event's time, and its states in `x`.
    fn land(&mut self, tr: f64, x: &mut [f64]) -> Result<f64, StepError>;
    /// Goes on after a crossing that changes no mode; whether that was the segment's end (then
    /// `x` holds the states there).
    fn resume(&mut self, t1: f64, x: &mut [f64]) -> Result<bool, StepError>;
    /// The time of the last accepted step's end, its states in `x`, and in `h` the step
    /// proposed from there.
    fn here(&mut self, x: &mut [f64], h: &mut f64) -> f64;
}

/// The segment loop, for any method: from `t0` toward `t1` until the end, the first crossing
/// that changes a mode, or an internal step's end where `pause` says stop; `x` ends as the
/// states there.
pub fn run(
    method: &mut impl Method,
    t0: f64,
    t1: f64,
    x: &mut [f64],
    h: &mut f64,
    restart: bool,
    mut pause: Pause,
) -> Result<SegmentEnd, StepError> {
    method.start(t0, t1, x, h, restart)?;
    loop {
        if method.at_end(t1, x, h) {
            return Ok(SegmentEnd::Reached);
        }
        match method.step(t1, x, h)? {
            Stepped::Inside => {
                if let Some(pause) = pause.as_mut() {
                    let t = method.here(x, h);
                    if pause(t) {
                        return Ok(SegmentEnd::Paused(t));
                    }
                }
            }
            Stepped::Stop => return Ok(SegmentEnd::Reached),
            Stepped::Root(tr) => {
                method.interpolate(tr, x)?;
                if method.changes_mode(tr, x) {
                    return method.land(tr, x).map(SegmentEnd::Root);
                }
                if method.resume(t1, x)? {
                    return Ok(SegmentEnd::Reached);
                }
            }
        }
    }
}

/// The states are no longer finite numbers.
pub fn not_finite(t: f64) -> StepError {
    StepError::Solver(
        t,
        "the states are no longer finite numbers: are the inputs sensible?".into(),
    )
}

/// More than [`MAX_INTERNAL_STEPS`] in one segment: inputs far outside what the model is made
/// for (1e300 N.m, say) would make the step take forever; give up with a reason instead of
/// hanging the master.
pub fn too_many_steps(t: f64) -> StepError {
    StepError::Solver(
        t,
        format!(
            "more than {MAX_INTERNAL_STEPS} internal steps in one segment: are the inputs sensible?"
        ),
    )
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
