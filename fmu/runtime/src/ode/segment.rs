//! One integration segment, whatever the method: the loop from a start time to the end, the
//! first crossing that changes a mode, or a pause ([`run`]), and what it needs of a method
//! ([`Method`], which the explicit pairs ([`super::explicit`]) and diffsol's BDF
//! ([`super::bdf`]) implement), of the model ([`Context`]: a working copy at the solver's
//! states, with the step's input ramps) and of an event ([`changes_mode`]). The methods depend
//! on this module alone; the integrator ([`super::integrator`]) drives them through it.

use super::erk::{self, Stepped};
use crate::model::{Indicators, Invalid, Model};

/// How many event updates in a row may change a mode before the event is declared chattering.
pub const MAX_EVENT_ITERATIONS: usize = 100;

/// Internal steps one segment may take before the step fails.
pub const MAX_INTERNAL_STEPS: usize = 100_000;

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

/// After each accepted internal step: its end time; `true` stops the integration there.
pub type Pause<'a> = Option<&'a mut dyn FnMut(f64) -> bool>;

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

/// An input following a ramp over a step: its setter, value at the step start, slope.
pub type Ramp<M> = (fn(&mut M, f64), f64, f64);

/// The inputs over one communication step: each ramp starts at `tc`.
pub struct Inputs<M> {
    pub(super) tc: f64,
    pub(super) ramps: Vec<Ramp<M>>,
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
    pub(super) inputs: Inputs<M>,
    pub(super) offset: Vec<f64>,
    /// The model's states: the solver's plus the offsets.
    pub(super) full: Vec<f64>,
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
    pub(super) fn model_states(&self, x: &mut [f64]) {
        for (x, o) in x.iter_mut().zip(&self.offset) {
            *x += o;
        }
    }
}

/// How a segment ended.
#[derive(Debug, Clone, Copy, PartialEq)]
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
