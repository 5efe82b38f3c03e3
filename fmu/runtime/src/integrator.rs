//! Integration over one communication step, with state and time events located inside it.
//!
//! Each instance keeps one diffsol problem and one Tsit45 solver (explicit Runge-Kutta 5(4)
//! with error control) for its whole life: a step costs the Runge-Kutta stages, not the building
//! of a solver, and allocates nothing. While the model reports itself stiff, a segment is
//! integrated with diffsol's BDF instead, built on the same problem for that segment.
//!
//! What carries over from one segment to the next is the step size the solver proposed last
//! (`h`): every segment starts from the model's states, with the derivative evaluated afresh
//! (inputs may jump at a communication point), so that `h`, the model's variables and the input
//! ramps are the whole integrator state, and an FMU state that holds them reproduces a step bit
//! for bit. (The step-size controller is diffsol's integral one, which remembers no earlier
//! error.)
//!
//! A zero crossing of an event indicator is located by diffsol's root finder (Illinois-modified
//! secant on the dense output, to a few hundred ulp of the time, as tested). The solver then
//! steps again from the start of that step, with the crossing as its stop time, so the states
//! at the event have the accuracy of a step end rather than of the dense output. The model's
//! event update is repeated until no mode changes, and the integration goes on from there.

use crate::model::{Invalid, Model};
use diffsol::error::DiffsolError;
use diffsol::{
    ExplicitRk, NalgebraContext, NalgebraLU, NalgebraMat, NalgebraVec, NonLinearOp, OdeBuilder,
    OdeEquationsImplicit, OdeSolverMethod, OdeSolverProblem, OdeSolverStopReason, Vector,
};
use std::cell::RefCell;
use std::rc::Rc;

/// How many event updates in a row may change a mode before the event is declared chattering.
pub const MAX_EVENT_ITERATIONS: usize = 100;

/// Internal solver steps one segment may take before the step fails.
pub const MAX_INTERNAL_STEPS: usize = 100_000;

/// Zero crossings one step may hold before the model is declared chattering.
pub const MAX_SEGMENTS: usize = 10_000;

/// Absolute tolerance per unit of relative tolerance. States are not all O(1) in SI units (a
/// compliance angle of 1e-4 rad is typical), so the absolute part stays three decades below.
const ATOL_PER_RTOL: f64 = 1e-3;

#[derive(Debug)]
pub enum StepError {
    /// The model rejected its state or inputs during an event update.
    Invalid(f64, Invalid),
    /// The integrator or the event iteration failed.
    Solver(f64, String),
}

/// Counters for the log and for benchmarks.
#[derive(Debug, Default, Clone, Copy)]
pub struct StepStats {
    pub state_events: usize,
    pub time_events: usize,
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

/// What the problem's closures evaluate: a working copy of the model and the step's inputs.
///
/// The solver integrates each angle state (see [`Model::ANGLE_STATES`]) as its increment from
/// the segment's start, `offset`: its error is then controlled relative to the distance
/// travelled, not to an angle that grows without bound (at 1200 rad and a tolerance of 1e-8,
/// 1.2e-5 rad per step would pass, and a crank's speed paid for it).
struct Context<M> {
    model: M,
    inputs: Inputs<M>,
    offset: Vec<f64>,
    /// The model's states: the solver's plus the offsets.
    full: Vec<f64>,
}

impl<M: Model> Context<M> {
    fn at(&mut self, x: &[f64], t: f64) -> &M {
        self.inputs.apply(&mut self.model, t);
        for ((f, x), o) in self.full.iter_mut().zip(x).zip(&self.offset) {
            *f = x + o;
        }
        self.model.set_states(&self.full);
        &self.model
    }

    /// The solver's states from the model's: angles less their offsets.
    fn solver_states(&self, x: &mut [f64]) {
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
enum SegmentEnd {
    /// At its end time.
    Reached,
    /// At a zero crossing that changes a mode, at this time.
    Root(f64),
}

/// A mode-changing test of a zero crossing: time and states there.
type ChangesMode<'a> = dyn FnMut(f64, &[f64]) -> bool + 'a;

/// The integrator of one instance.
pub struct Integrator<M: Model> {
    context: Rc<RefCell<Context<M>>>,
    /// None for a model without continuous states.
    solver: Option<Box<dyn Segment>>,
    rtol: f64,
    /// The states, between the solver and the model.
    x: Vec<f64>,
}

impl<M: Model> Integrator<M> {
    pub fn new(rtol: f64) -> Result<Self, String> {
        let context = Rc::new(RefCell::new(Context {
            model: M::default(),
            inputs: Inputs {
                tc: 0.0,
                ramps: Vec::new(),
            },
            offset: vec![0.0; M::STATES],
            full: vec![0.0; M::STATES],
        }));
        let solver = if M::STATES == 0 {
            None
        } else {
            Some(solver(context.clone(), rtol).map_err(|e| e.to_string())?)
        };
        Ok(Integrator {
            context,
            solver,
            rtol,
            x: vec![0.0; M::STATES],
        })
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
    pub fn integrate(
        &mut self,
        model: &mut M,
        t0: f64,
        t1: f64,
        h: &mut f64,
        log_event: &mut dyn FnMut(&str),
    ) -> Result<StepStats, StepError> {
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
            log_event(&format!(
                "mode change at the communication point t = {t}{}",
                described(model, t)
            ));
        }
        if !(h.is_finite() && *h > 0.0) {
            *h = t1 - t0;
            restart = true;
        }
        while t1 - t > time_epsilon(t1) {
            let time_event = model.next_time_event(t).filter(|&te| te > t && te < t1);
            let t_stop = time_event.unwrap_or(t1);
            let end = self.segment(model, t, t_stop, h, restart)?;
            restart = false;
            match end {
                SegmentEnd::Reached => {
                    t = t_stop;
                    self.apply_inputs(model, t);
                    if time_event.is_some() {
                        stats.time_events += 1;
                        log_event(&format!("time event at t = {t}{}", described(model, t)));
                        restart = event_iteration(model, t)? > 0;
                    }
                }
                SegmentEnd::Root(tr) => {
                    t = tr;
                    self.apply_inputs(model, t);
                    // A crossing at rounding level that changes no mode is no event.
                    if event_iteration(model, t)? > 0 {
                        stats.state_events += 1;
                        log_event(&format!("state event at t = {t}{}", described(model, t)));
                        restart = true;
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
    ) -> Result<SegmentEnd, StepError> {
        let Some(solver) = self.solver.as_mut() else {
            return Ok(SegmentEnd::Reached);
        };
        if t1 - t0 <= time_epsilon(t1) {
            // Nothing to integrate, but event indicators may still change sign with the inputs.
            return Ok(SegmentEnd::Reached);
        }
        model.get_states(&mut self.x);
        {
            // The closures see the model's parameters, modes and inputs as they are now.
            let mut c = self.context.borrow_mut();
            c.model.clone_from(model);
            c.offset.fill(0.0);
            for &i in M::ANGLE_STATES {
                c.offset[i] = self.x[i];
            }
            c.solver_states(&mut self.x);
        }
        let stiff = model.stiff();
        let context = &self.context;
        // An indicator that merely touches zero (diffsol reports a root wherever one is exactly
        // 0) changes no mode: the event is tried on a copy of the model first.
        let mut changes_mode = |tr: f64, x: &[f64]| {
            let mut probe = model.clone();
            let mut c = context.borrow_mut();
            c.full.copy_from_slice(x);
            let Context { full, offset, .. } = &mut *c;
            for (f, o) in full.iter_mut().zip(offset.iter()) {
                *f += o;
            }
            probe.set_states(&c.full);
            c.inputs.apply(&mut probe, tr);
            !matches!(event_iteration(&mut probe, tr), Ok(0))
        };
        // Should diffsol panic (it unwraps some internal errors), that is a failed step, not a
        // broken instance: fmi2Error, and a rollback with fmi2SetFMUstate or a reset recovers.
        let x = &mut self.x;
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            solver.run(t0, t1, x, h, How { stiff, restart }, &mut changes_mode)
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

/// Builds the diffsol problem whose closures evaluate the model in `context`, and its solver.
fn solver<M: Model>(
    context: Rc<RefCell<Context<M>>>,
    rtol: f64,
) -> Result<Box<dyn Segment>, DiffsolError> {
    let kept = problem(context.clone(), rtol, 0.0, 1.0)?;
    // BDF gets a problem of its own per segment, starting there (see `Diffsol::implicit`).
    let rebuild = Box::new(move |t0: f64, h0: f64| problem(context.clone(), rtol, t0, h0));
    Ok(Box::new(Diffsol::new(kept, rebuild)?))
}

/// The problem starting at `t0` (with step `h0`) from the states of the context's model.
fn problem<M: Model>(
    context: Rc<RefCell<Context<M>>>,
    rtol: f64,
    t0: f64,
    h0: f64,
) -> Result<
    OdeSolverProblem<
        impl OdeEquationsImplicit<T = f64, V = Vec64, M = NalgebraMat<f64>, C = NalgebraContext>
            + 'static,
    >,
    DiffsolError,
> {
    let n = M::STATES;
    let (rhs, jv, init, root) = (context.clone(), context.clone(), context.clone(), context);
    OdeBuilder::<NalgebraMat<f64>>::new()
        .t0(t0)
        .h0(h0)
        .rtol(rtol)
        .atol([rtol * ATOL_PER_RTOL])
        .rhs_implicit(
            move |x: &[f64], _p: &[f64], t: f64, dx: &mut [f64]| {
                rhs.borrow_mut().at(x, t).derivatives(t, dx)
            },
            // Jacobian times v by a forward difference: only the implicit (stiff) solver asks.
            move |x: &[f64], _p: &[f64], t: f64, v: &[f64], jv_out: &mut [f64]| {
                let norm_v = v.iter().fold(0.0f64, |m, a| m.max(a.abs()));
                if norm_v == 0.0 {
                    jv_out.fill(0.0);
                    return;
                }
                let norm_x = x.iter().fold(0.0f64, |m, a| m.max(a.abs()));
                let eps = f64::EPSILON.sqrt() * (1.0 + norm_x) / norm_v;
                let shifted: Vec<f64> = x.iter().zip(v).map(|(a, b)| a + eps * b).collect();
                let mut f0 = vec![0.0; x.len()];
                let mut c = jv.borrow_mut();
                c.at(x, t).derivatives(t, &mut f0);
                c.at(&shifted, t).derivatives(t, jv_out);
                for (j, f) in jv_out.iter_mut().zip(&f0) {
                    *j = (*j - f) / eps;
                }
            },
        )
        // Only read when a solver is built: the segment sets its own start state.
        .init(
            move |_p: &[f64], _t: f64, y: &mut [f64]| {
                let c = init.borrow();
                c.model.get_states(y);
                c.solver_states(y);
            },
            n,
        )
        .root(
            move |x: &[f64], _p: &[f64], t: f64, z: &mut [f64]| {
                if M::EVENT_INDICATORS == 0 {
                    z[0] = 1.0; // diffsol wants at least one root function; this one never crosses
                } else {
                    root.borrow_mut().at(x, t).event_indicators(t, z)
                }
            },
            M::EVENT_INDICATORS.max(1),
        )
        .build()
}

/// Integration of one segment, whatever the problem's closure types.
trait Segment {
    /// From `t0` with states `x` toward `t1`; `x` ends as the states at the segment's end, `h`
    /// as the step size to try next.
    fn run(
        &mut self,
        t0: f64,
        t1: f64,
        x: &mut [f64],
        h: &mut f64,
        how: How,
        changes_mode: &mut ChangesMode,
    ) -> Result<SegmentEnd, StepError>;
}

/// How a segment is integrated.
#[derive(Debug, Clone, Copy)]
struct How {
    /// With BDF rather than Tsit45.
    stiff: bool,
    /// With a first step estimated afresh (after a mode change) rather than the one learned.
    restart: bool,
}

type Vec64 = NalgebraVec<f64>;

/// A start of step to go back to: time, states, derivative, trial step.
struct Start {
    t: f64,
    y: Vec64,
    dy: Vec64,
}

/// A diffsol problem with its Tsit45 solver, kept for the life of an instance.
struct Diffsol<Eqn>
where
    Eqn: OdeEquationsImplicit<T = f64, V = Vec64, M = NalgebraMat<f64>, C = NalgebraContext>
        + 'static,
{
    // Declared before `problem` so that it is dropped first: it borrows the problem.
    rk: ExplicitRk<'static, Eqn>,
    /// Boxed so that its address stays put while `rk` borrows it; never moved out or changed.
    problem: Box<OdeSolverProblem<Eqn>>,
    start: Start,
    /// Dense-output values.
    buffer: Vec64,
    /// The dense-output states at a crossing, should landing on it fail.
    fallback: Vec<f64>,
    /// A problem starting at a given time and step, for a BDF segment.
    rebuild: Rebuild<Eqn>,
}

type Rebuild<Eqn> = Box<dyn Fn(f64, f64) -> Result<OdeSolverProblem<Eqn>, DiffsolError>>;

fn error_at(t: f64) -> impl Fn(DiffsolError) -> StepError {
    move |e| StepError::Solver(t, e.to_string())
}

impl<Eqn> Diffsol<Eqn>
where
    Eqn: OdeEquationsImplicit<T = f64, V = Vec64, M = NalgebraMat<f64>, C = NalgebraContext>
        + 'static,
{
    fn new(problem: OdeSolverProblem<Eqn>, rebuild: Rebuild<Eqn>) -> Result<Self, DiffsolError> {
        let problem = Box::new(problem);
        // SAFETY: the problem lives on the heap, owned by this struct, and is never moved out,
        // replaced or mutated while the solver exists; the solver is dropped before it (field
        // order) and the reference never leaves this struct.
        let shared: &'static OdeSolverProblem<Eqn> =
            unsafe { &*(problem.as_ref() as *const OdeSolverProblem<Eqn>) };
        let rk = shared.tsit45()?;
        let y = rk.state().y.clone();
        Ok(Diffsol {
            start: Start {
                t: 0.0,
                y: y.clone(),
                dy: y.clone(),
            },
            fallback: vec![0.0; y.len()],
            rebuild,
            buffer: y,
            rk,
            problem,
        })
    }

    /// Puts the solver at `t` with states `x`, the derivative evaluated there, and step `h`.
    fn set(&mut self, t: f64, x: &[f64], h: f64) {
        let state = self.rk.state_mut();
        for (i, v) in x.iter().enumerate() {
            state.y.set_index(i, *v);
        }
        *state.t = t;
        *state.h = h;
        self.problem.eqn.rhs().call_inplace(state.y, t, state.dy);
    }

    /// The first-step estimate of Hairer, Norsett and Wanner (Solving ODEs I, II.4), as diffsol
    /// computes it, but in the solver's own buffers: from the states and derivative set at `t`.
    fn first_step(&mut self, t: f64) -> f64 {
        let (rtol, atol) = (self.problem.rtol, self.problem.atol.get_index(0));
        let state = self.rk.state();
        let n = state.y.len();
        let weight = |i: usize| atol + rtol * state.y.get_index(i).abs();
        let norm = |v: &dyn Fn(usize) -> f64| {
            ((0..n).map(|i| (v(i) / weight(i)).powi(2)).sum::<f64>() / n as f64).sqrt()
        };
        let d0 = norm(&|i| state.y.get_index(i));
        let d1 = norm(&|i| state.dy.get_index(i));
        let h0 = if d0 < 1e-5 || d1 < 1e-5 {
            1e-6
        } else {
            0.01 * d0 / d1
        };
        // An explicit Euler step of h0, and the derivative there.
        for i in 0..n {
            self.buffer
                .set_index(i, state.y.get_index(i) + h0 * state.dy.get_index(i));
        }
        self.problem
            .eqn
            .rhs()
            .call_inplace(&self.buffer, t + h0, &mut self.start.dy);
        let state = self.rk.state();
        let d2 = norm(&|i| self.start.dy.get_index(i) - state.dy.get_index(i)) / h0;
        let largest = d1.max(d2);
        let h1 = if largest <= 1e-15 {
            (h0 * 1e-3).max(1e-6)
        } else {
            (0.01 / largest).powf(1.0 / (self.rk.order() as f64 + 1.0))
        };
        (100.0 * h0).min(h1)
    }

    /// Remembers the start of the step about to be taken.
    fn remember(&mut self) {
        let state = self.rk.state();
        self.start.t = state.t;
        self.start.y.copy_from(state.y);
        self.start.dy.copy_from(state.dy);
    }

    /// Goes back to the remembered start, to step to `t` exactly.
    fn back_to_start(&mut self, t: f64) -> Result<(), DiffsolError> {
        let state = self.rk.state_mut();
        state.y.copy_from(&self.start.y);
        state.dy.copy_from(&self.start.dy);
        *state.t = self.start.t;
        *state.h = t - self.start.t;
        self.rk.set_stop_time(t)
    }

    fn states_out(&self, x: &mut [f64]) -> Result<(), StepError> {
        let state = self.rk.state();
        for (i, v) in x.iter_mut().enumerate() {
            *v = state.y.get_index(i);
            if !v.is_finite() {
                return Err(StepError::Solver(
                    state.t,
                    "the states are no longer finite numbers: are the inputs sensible?".into(),
                ));
            }
        }
        Ok(())
    }

    fn interpolated(&mut self, t: f64, x: &mut [f64]) -> Result<(), StepError> {
        self.rk
            .interpolate_inplace(t, &mut self.buffer)
            .map_err(error_at(t))?;
        for (i, v) in x.iter_mut().enumerate() {
            *v = self.buffer.get_index(i);
        }
        Ok(())
    }

    /// One accepted step, with the limit on their number per segment.
    fn step(&mut self, steps: &mut usize) -> Result<OdeSolverStopReason<f64>, StepError> {
        *steps += 1;
        if *steps > MAX_INTERNAL_STEPS {
            // Inputs far outside what the model is made for (1e300 N.m, say) would make the
            // step take forever: give up with a reason instead of hanging the master.
            return Err(StepError::Solver(
                self.rk.state().t,
                format!("more than {MAX_INTERNAL_STEPS} internal steps in one segment: are the inputs sensible?"),
            ));
        }
        self.remember();
        let reason = self.rk.step().map_err(error_at(self.start.t))?;
        let y = self.rk.state().y;
        if (0..y.len()).any(|i| !y.get_index(i).is_finite()) {
            return Err(StepError::Solver(
                self.rk.state().t,
                "the states are no longer finite numbers: are the inputs sensible?".into(),
            ));
        }
        Ok(reason)
    }

    fn explicit(
        &mut self,
        t0: f64,
        t1: f64,
        x: &mut [f64],
        h: &mut f64,
        restart: bool,
        changes_mode: &mut ChangesMode,
    ) -> Result<SegmentEnd, StepError> {
        self.set(t0, x, *h);
        if restart {
            *h = self.first_step(t0).min(*h);
            *self.rk.state_mut().h = *h;
        }
        // A stop time left from landing on an event would stop this segment at its start; one
        // beyond any time replaces it (diffsol has no way to clear it).
        self.rk.set_stop_time(f64::MAX).map_err(error_at(t0))?;
        let mut steps = 0;
        loop {
            // diffsol's proposal for the next step, before a stop time cuts it: what the next
            // segment starts from. The stop time is set only for the step that would pass it.
            let (t, proposal) = (self.rk.state().t, self.rk.state().h);
            *h = proposal;
            if t + proposal > t1 - time_epsilon(t1) && self.rk.set_stop_time(t1).is_err() {
                // At the end already (a touch of an indicator there stopped the last step).
                self.states_out(x)?;
                return Ok(SegmentEnd::Reached);
            }
            let reason = self.step(&mut steps)?;
            let (t, proposed) = (self.rk.state().t, self.rk.state().h);
            match reason {
                OdeSolverStopReason::InternalTimestep => continue,
                OdeSolverStopReason::TstopReached => {
                    // A final step much shorter than proposed says little about the next one.
                    if t - self.start.t >= 0.5 * proposal {
                        *h = proposed;
                    }
                    self.states_out(x)?;
                    return Ok(SegmentEnd::Reached);
                }
                OdeSolverStopReason::RootFound(tr, _) => {
                    *h = proposed;
                    self.interpolated(tr, x)?;
                    if changes_mode(tr, x) {
                        self.fallback.copy_from_slice(x);
                        if let Some(t) = self.land(tr, x, &mut steps, changes_mode)? {
                            return Ok(SegmentEnd::Root(t));
                        }
                        // No step end was found across the crossing: the dense output there.
                        x.copy_from_slice(&self.fallback);
                        return Ok(SegmentEnd::Root(tr));
                    }
                    // A touch that changes no mode: go on. diffsol's root finder keeps the time
                    // of its last point but the indicator values at this step's end, and a later
                    // secant could then ask for a time outside the step (diffsol panics).
                    // Marking the state as changed makes diffsol restart the root finder here.
                    let _ = self.rk.state_mut();
                    if t1 - t <= time_epsilon(t1) {
                        self.states_out(x)?;
                        return Ok(SegmentEnd::Reached);
                    }
                }
            }
        }
    }

    /// Steps again from the start of the step that holds the crossing at `tr`, with `tr` as the
    /// stop time: the states at the event are a step end, not the dense output.
    fn land(
        &mut self,
        mut tr: f64,
        x: &mut [f64],
        steps: &mut usize,
        changes_mode: &mut ChangesMode,
    ) -> Result<Option<f64>, StepError> {
        loop {
            if tr - self.start.t <= time_epsilon(tr) || self.back_to_start(tr).is_err() {
                // The crossing is at the start of the step.
                for (i, v) in x.iter_mut().enumerate() {
                    *v = self.start.y.get_index(i);
                }
                return Ok(changes_mode(self.start.t, x).then_some(self.start.t));
            }
            loop {
                match self.step(steps)? {
                    OdeSolverStopReason::InternalTimestep => continue,
                    OdeSolverStopReason::TstopReached => {
                        return self.past_the_crossing(x, steps, changes_mode);
                    }
                    OdeSolverStopReason::RootFound(t2, _) => {
                        let t = self.rk.state().t;
                        if t - t2 <= 10.0 * time_epsilon(t) {
                            // Found again where this step ends: the event is here.
                            return self.past_the_crossing(x, steps, changes_mode);
                        }
                        self.interpolated(t2, x)?;
                        if changes_mode(t2, x) {
                            // The shorter step sees the crossing a little earlier.
                            tr = t2;
                            break;
                        }
                        let _ = self.rk.state_mut();
                        if tr - t <= time_epsilon(tr) || self.rk.set_stop_time(tr).is_err() {
                            return self.past_the_crossing(x, steps, changes_mode);
                        }
                    }
                }
            }
        }
    }
}

impl<Eqn> Diffsol<Eqn>
where
    Eqn: OdeEquationsImplicit<T = f64, V = Vec64, M = NalgebraMat<f64>, C = NalgebraContext>
        + 'static,
{
    /// The solver has landed on a crossing: the event is at this step end, unless rounding left
    /// the states just short of it (the indicator a hair from zero on the near side). Then tiny
    /// steps, growing from 200 ulp of the time, carry them across.
    fn past_the_crossing(
        &mut self,
        x: &mut [f64],
        steps: &mut usize,
        changes_mode: &mut ChangesMode,
    ) -> Result<Option<f64>, StepError> {
        let mut t = self.rk.state().t;
        self.states_out(x)?;
        // diffsol takes stop times from about 100 ulp of the time on.
        let mut delta = 200.0 * f64::EPSILON * t.abs().max(1.0);
        for _ in 0..20 {
            if changes_mode(t, x) {
                return Ok(Some(t));
            }
            *self.rk.state_mut().h = delta;
            delta *= 2.0;
            // A stop time within diffsol's rounding of the current time is refused: further.
            if self.rk.set_stop_time(t + delta / 2.0).is_err() {
                continue;
            }
            while let OdeSolverStopReason::InternalTimestep = self.step(steps)? {}
            t = self.rk.state().t;
            self.states_out(x)?;
        }
        Ok(None)
    }

    /// A stiff segment with a BDF solver built for it on the same problem (it allocates).
    fn implicit(
        &mut self,
        t0: f64,
        t1: f64,
        x: &mut [f64],
        h: &mut f64,
        changes_mode: &mut ChangesMode,
    ) -> Result<SegmentEnd, StepError> {
        // A problem of its own, starting here: a BDF solver built on the kept problem and moved
        // to this start keeps a Jacobian from elsewhere, and lost accuracy (3e-11 of the range
        // of the stiff transmission test's dissipated energy became 1e-6).
        let problem = (self.rebuild)(t0, t1 - t0).map_err(error_at(t0))?;
        let mut bdf = problem.bdf::<NalgebraLU<f64>>().map_err(error_at(t0))?;
        bdf.set_stop_time(t1).map_err(error_at(t0))?;
        let mut steps = 0usize;
        loop {
            steps += 1;
            if steps > MAX_INTERNAL_STEPS {
                return Err(StepError::Solver(
                    bdf.state().t,
                    format!("more than {MAX_INTERNAL_STEPS} internal steps in one segment: are the inputs sensible?"),
                ));
            }
            let reason = bdf.step().map_err(error_at(bdf.state().t))?;
            let state = bdf.state();
            for (i, v) in x.iter_mut().enumerate() {
                *v = state.y.get_index(i);
                if !v.is_finite() {
                    return Err(StepError::Solver(
                        state.t,
                        "the states are no longer finite numbers: are the inputs sensible?".into(),
                    ));
                }
            }
            if state.t + state.h < t1 - time_epsilon(t1) {
                *h = state.h;
            }
            match reason {
                OdeSolverStopReason::InternalTimestep => continue,
                OdeSolverStopReason::TstopReached => return Ok(SegmentEnd::Reached),
                OdeSolverStopReason::RootFound(tr, _) => {
                    let t = state.t;
                    let y = bdf.interpolate(tr).map_err(error_at(tr))?;
                    for (i, v) in x.iter_mut().enumerate() {
                        *v = y.get_index(i);
                    }
                    if changes_mode(tr, x) {
                        bdf.state_mut_back(tr).map_err(error_at(tr))?;
                        return Ok(SegmentEnd::Root(tr));
                    }
                    let _ = bdf.state_mut();
                    if t1 - t <= time_epsilon(t1) || bdf.set_stop_time(t1).is_err() {
                        let y = bdf.interpolate(t1).map_err(error_at(t1))?;
                        for (i, v) in x.iter_mut().enumerate() {
                            *v = y.get_index(i);
                        }
                        return Ok(SegmentEnd::Reached);
                    }
                }
            }
        }
    }
}

impl<Eqn> Segment for Diffsol<Eqn>
where
    Eqn: OdeEquationsImplicit<T = f64, V = Vec64, M = NalgebraMat<f64>, C = NalgebraContext>
        + 'static,
{
    fn run(
        &mut self,
        t0: f64,
        t1: f64,
        x: &mut [f64],
        h: &mut f64,
        how: How,
        changes_mode: &mut ChangesMode,
    ) -> Result<SegmentEnd, StepError> {
        if how.stiff {
            self.implicit(t0, t1, x, h, changes_mode)
        } else {
            self.explicit(t0, t1, x, h, how.restart, changes_mode)
        }
    }
}

/// One integration with a fresh integrator and no inputs, for the tests.
#[cfg(test)]
fn integrate<M: Model>(model: &mut M, t0: f64, t1: f64, rtol: f64) -> Result<StepStats, StepError> {
    let mut h = f64::NAN;
    Integrator::<M>::new(rtol)
        .unwrap()
        .integrate(model, t0, t1, &mut h, &mut |_| {})
}

#[cfg(test)]
mod tests {
    //! The integrator against closed-form solutions, on small test models.
    use super::*;
    use crate::model::Experiment;
    use crate::test_models::{Ball, E, G};
    use crate::variables::Var;

    #[test]
    fn bounce_times_are_located_inside_the_step() {
        let mut ball = Ball {
            h: 1.0,
            v: 0.0,
            bounces: 0,
        };
        // One communication step of 1 s holds the first two bounces.
        let t1 = (2.0f64 / G).sqrt();
        let t2 = t1 + 2.0 * E * G * t1 / G;
        let stats = integrate(&mut ball, 0.0, 1.0, 1e-10).unwrap();
        assert_eq!(stats.state_events, 2);
        assert_eq!(ball.bounces, 2);
        // After the second bounce: v(t2+) = E^2 * G * t1, then free flight to t = 1.
        let v2 = E * E * G * t1;
        let dt = 1.0 - t2;
        assert!((ball.v - (v2 - G * dt)).abs() < 1e-8, "v = {}", ball.v);
        assert!(
            (ball.h - (v2 * dt - 0.5 * G * dt * dt)).abs() < 1e-8,
            "h = {}",
            ball.h
        );
    }

    #[test]
    fn event_iteration_that_never_settles_is_an_error() {
        #[derive(Default, Clone)]
        struct Flip(Ball);
        impl Model for Flip {
            const NAME: &'static str = "Flip";
            const DESCRIPTION: &'static str = "";
            const DOCUMENTATION: &'static str = "";
            const DEFAULT_EXPERIMENT: Experiment = Ball::DEFAULT_EXPERIMENT;
            const STATES: usize = 0;
            fn variables() -> Vec<Var<Self>> {
                vec![]
            }
            fn initialize(&mut self) -> Result<(), Invalid> {
                Ok(())
            }
            fn get_states(&self, _x: &mut [f64]) {}
            fn set_states(&mut self, _x: &[f64]) {}
            fn derivatives(&self, _t: f64, _dx: &mut [f64]) {}
            fn event_update(&mut self, _t: f64) -> Result<bool, Invalid> {
                self.0.bounces += 1;
                Ok(true)
            }
            fn update_outputs(&mut self, _t: f64) {}
        }
        let mut m = Flip::default();
        assert!(matches!(event_iteration(&mut m, 0.5), Err(StepError::Solver(t, _)) if t == 0.5));
    }

    #[test]
    fn time_events_split_the_step() {
        /// x' = u(t), u a unit step at t = 0.3: x(1) = 0.7 exactly.
        #[derive(Default, Clone)]
        struct StepInput {
            x: f64,
            u: f64,
        }
        impl Model for StepInput {
            const NAME: &'static str = "StepInput";
            const DESCRIPTION: &'static str = "";
            const DOCUMENTATION: &'static str = "";
            const DEFAULT_EXPERIMENT: Experiment = Ball::DEFAULT_EXPERIMENT;
            const STATES: usize = 1;
            fn variables() -> Vec<Var<Self>> {
                vec![]
            }
            fn initialize(&mut self) -> Result<(), Invalid> {
                Ok(())
            }
            fn get_states(&self, x: &mut [f64]) {
                x[0] = self.x;
            }
            fn set_states(&mut self, x: &[f64]) {
                self.x = x[0];
            }
            fn derivatives(&self, _t: f64, dx: &mut [f64]) {
                dx[0] = self.u;
            }
            fn next_time_event(&self, t: f64) -> Option<f64> {
                (t < 0.3).then_some(0.3)
            }
            fn event_update(&mut self, t: f64) -> Result<bool, Invalid> {
                let u = if t >= 0.3 { 1.0 } else { 0.0 };
                let changed = u != self.u;
                self.u = u;
                Ok(changed)
            }
            fn update_outputs(&mut self, _t: f64) {}
        }
        let mut m = StepInput::default();
        let stats = integrate(&mut m, 0.0, 1.0, 1e-8).unwrap();
        assert_eq!(stats.time_events, 1);
        assert!((m.x - 0.7).abs() < 1e-12, "x = {}", m.x);
    }
}
#[cfg(test)]
mod scalar_tests {
    use super::*;
    use crate::model::Experiment;
    use crate::variables::Var;

    /// A one-state test model: x' = f(t, x) with one indicator z(t, x), reporting `stiff`;
    /// `calls` counts right-hand-side evaluations, shared by the copies the integrator works on.
    #[derive(Clone)]
    struct Scalar {
        x: f64,
        f: fn(f64, f64) -> f64,
        z: fn(f64, f64) -> f64,
        stiff: bool,
        calls: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    }
    impl Default for Scalar {
        fn default() -> Self {
            Scalar {
                x: 0.0,
                f: |_, _| 1.0,
                z: |_, _| 1.0,
                stiff: false,
                calls: Default::default(),
            }
        }
    }
    impl Model for Scalar {
        const NAME: &'static str = "Scalar";
        const DESCRIPTION: &'static str = "";
        const DOCUMENTATION: &'static str = "";
        const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0);
        const STATES: usize = 1;
        const EVENT_INDICATORS: usize = 1;
        fn stiff(&self) -> bool {
            self.stiff
        }
        fn variables() -> Vec<Var<Self>> {
            vec![]
        }
        fn initialize(&mut self) -> Result<(), Invalid> {
            Ok(())
        }
        fn get_states(&self, x: &mut [f64]) {
            x[0] = self.x;
        }
        fn set_states(&mut self, x: &[f64]) {
            self.x = x[0];
        }
        fn derivatives(&self, t: f64, dx: &mut [f64]) {
            self.calls
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            dx[0] = (self.f)(t, self.x);
        }
        fn event_indicators(&self, t: f64, z: &mut [f64]) {
            z[0] = (self.z)(t, self.x);
        }
        fn update_outputs(&mut self, _t: f64) {}
    }

    /// An indicator identically zero: diffsol reports a root at every step, none changes a mode.
    #[test]
    fn an_indicator_resting_at_zero_is_no_event_and_the_step_ends_on_time() {
        let mut m = Scalar {
            z: |_, _| 0.0,
            ..Default::default()
        };
        let stats = integrate(&mut m, 0.0, 1.0, 1e-8).unwrap();
        assert_eq!(stats.state_events, 0);
        assert!((m.x - 1.0).abs() < 1e-12, "x = {}", m.x);
    }

    /// Derivatives that turn NaN (as absurd inputs make them) before an indicator crosses.
    #[test]
    fn non_finite_derivatives_are_an_error_not_a_panic() {
        let mut m = Scalar {
            f: |t, _| if t > 0.5 { f64::NAN } else { 1.0 },
            z: |_, x| x - 0.9,
            ..Default::default()
        };
        let r = integrate(&mut m, 0.0, 1.0, 1e-8);
        assert!(r.is_err(), "{:?}", r.map(|_| ()));
    }

    const K: f64 = 1e5;

    /// x' = -k (x - cos t), k = 1e5, over one 1 s step: the explicit solver needs steps below
    /// 3e-5 s. Returns the number of right-hand-side evaluations.
    fn relax(stiff: bool) -> usize {
        let mut m = Scalar {
            x: 1.0,
            f: |t, x| -K * (x - t.cos()),
            stiff,
            ..Default::default()
        };
        integrate(&mut m, 0.0, 1.0, 1e-8).unwrap();
        // x = (K^2 cos t + K sin t)/(K^2 + 1) + transient e^{-K t} (gone by t = 1)
        let exact = (K * K * 1f64.cos() + K * 1f64.sin()) / (K * K + 1.0);
        assert!(
            (m.x - exact).abs() < 1e-7,
            "stiff {stiff}: x = {}, exact {exact}",
            m.x
        );
        m.calls.load(std::sync::atomic::Ordering::Relaxed)
    }

    #[test]
    fn a_model_that_reports_itself_stiff_gets_bdf() {
        let (implicit, explicit) = (relax(true), relax(false));
        // Both are right; the explicit solver pays for stability with ~30000 steps.
        assert!(
            implicit * 20 < explicit,
            "BDF {implicit} calls, Tsit45 {explicit}"
        );
    }
}
