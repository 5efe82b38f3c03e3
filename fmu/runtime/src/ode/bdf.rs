//! diffsol's BDF (variable order, Newton with a finite-difference Jacobian) as a [`Method`] of
//! the segment loop, for the segments of a model that reports itself stiff. A segment that
//! starts where the last one ended at its end or at a pause, nothing changed in between, goes
//! on with the same solver; any other builds a new one (it allocates). The solver sees the model
//! through [`StiffRhs`] alone, so that it is compiled once, here, not once per model.

use super::erk::Stepped;
use super::segment::{
    not_finite, time_epsilon, too_many_steps, ChangesMode, Context, Method, Pause, SegmentEnd,
    StepError, ATOL_PER_RTOL, MAX_INTERNAL_STEPS,
};
use crate::model::{Indicators, Model};
use diffsol::error::DiffsolError;
use diffsol::{
    NalgebraContext, NalgebraLU, NalgebraMat, NalgebraVec, OdeBuilder, OdeEquationsImplicit,
    OdeSolverMethod, OdeSolverProblem, OdeSolverStopReason, Vector,
};
use std::cell::RefCell;
use std::marker::PhantomData;
use std::rc::Rc;

/// What the BDF solver asks of the model, behind `dyn`: the solver and its problem are then
/// compiled once, in this crate, rather than once per model (diffsol's BDF is a sixth of a
/// model's code); a stiff step's evaluations cost one indirect call more each.
pub trait StiffRhs {
    /// The state derivatives at the solver's states `x` and time `t`.
    fn derivatives(&mut self, x: &[f64], t: f64, dx: &mut [f64]);
    /// The event indicators there (one that never crosses if the model has none: diffsol wants
    /// at least one).
    fn indicators(&mut self, x: &[f64], t: f64, z: &mut [f64]);
    /// The solver's states from the model's.
    fn initial(&self, y: &mut [f64]);
}

impl<M: Model> StiffRhs for Context<M> {
    fn derivatives(&mut self, x: &[f64], t: f64, dx: &mut [f64]) {
        self.at(x, t).derivatives(t, dx)
    }
    fn indicators(&mut self, x: &[f64], t: f64, z: &mut [f64]) {
        if M::EVENT_INDICATORS == 0 {
            z[0] = 1.0;
        } else {
            self.at(x, t).event_indicators(t, &mut Indicators::new(z))
        }
    }
    fn initial(&self, y: &mut [f64]) {
        self.model.get_states(y);
        self.solver_states(y);
    }
}

/// The shared model, as the BDF solver sees it.
type Shared = Rc<RefCell<dyn StiffRhs>>;

/// The problem starting at `t0` (with step `h0`) for `n` states and `roots` root functions
/// (at least one) of `context`.
fn problem(
    context: Shared,
    n: usize,
    roots: usize,
    rtol: f64,
    t0: f64,
    h0: f64,
) -> Result<OdeSolverProblem<impl Equations>, DiffsolError> {
    let (rhs, jv, init, root) = (context.clone(), context.clone(), context.clone(), context);
    // The Jacobian product's work vectors, allocated with the problem (once per segment that
    // builds a solver), not per product.
    let work = RefCell::new((vec![0.0; n], vec![0.0; n]));
    OdeBuilder::<NalgebraMat<f64>>::new()
        .t0(t0)
        .h0(h0)
        .rtol(rtol)
        .atol([rtol * ATOL_PER_RTOL])
        .rhs_implicit(
            move |x: &[f64], _p: &[f64], t: f64, dx: &mut [f64]| {
                rhs.borrow_mut().derivatives(x, t, dx)
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
                let (shifted, f0) = &mut *work.borrow_mut();
                for ((s, a), b) in shifted.iter_mut().zip(x).zip(v) {
                    *s = a + eps * b;
                }
                let mut c = jv.borrow_mut();
                c.derivatives(x, t, f0);
                c.derivatives(shifted, t, jv_out);
                for (j, f) in jv_out.iter_mut().zip(f0.iter()) {
                    *j = (*j - f) / eps;
                }
            },
        )
        // Only read when a solver is built: the segment sets its own start state.
        .init(
            move |_p: &[f64], _t: f64, y: &mut [f64]| init.borrow().initial(y),
            n,
        )
        .root(
            move |x: &[f64], _p: &[f64], t: f64, z: &mut [f64]| {
                root.borrow_mut().indicators(x, t, z)
            },
            roots,
        )
        .build()
}

/// diffsol's equations of a problem.
pub trait Equations:
    OdeEquationsImplicit<T = f64, V = Vec64, M = NalgebraMat<f64>, C = NalgebraContext> + 'static
{
}

impl<E> Equations for E where
    E: OdeEquationsImplicit<T = f64, V = Vec64, M = NalgebraMat<f64>, C = NalgebraContext>
        + 'static
{
}

/// The BDF integrator of a model with `n` states and `indicators` event indicators: not
/// generic, so compiled here alone.
#[inline(never)]
pub fn stiff(context: Shared, n: usize, indicators: usize, rtol: f64) -> Box<dyn Stiff> {
    // diffsol wants at least one root function (`StiffRhs::indicators`).
    let roots = indicators.max(1);
    Box::new(Bdf::new(Box::new(move |t0, h0| {
        problem(context.clone(), n, roots, rtol, t0, h0)
    })))
}

/// Integration of a stiff segment, whatever the problem's closure types.
pub trait Stiff {
    /// Whether a segment from `t0` can go on where the last one ended there (its order, history
    /// and step size kept), if nothing changed in between.
    fn can_continue(&self, t0: f64) -> bool;

    /// Runs the segment loop from `t0` with states `x` toward `t1` with a BDF solver built for
    /// it, or, with `continues` (nothing changed since the last segment ended at `t0`), with
    /// that segment's solver state: `x` ends as the states at the segment's end or event, `h`
    /// as the step size to try next.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        t0: f64,
        t1: f64,
        x: &mut [f64],
        h: &mut f64,
        changes_mode: &mut ChangesMode,
        pause: Pause,
        continues: bool,
    ) -> Result<SegmentEnd, StepError>;
}

type Vec64 = NalgebraVec<f64>;

type Rebuild<Eqn> = Box<dyn Fn(f64, f64) -> Result<OdeSolverProblem<Eqn>, DiffsolError>>;

/// diffsol's BDF, on a problem that starts where the segment does.
struct Bdf<Eqn: Equations> {
    /// A problem starting at a given time and step.
    rebuild: Rebuild<Eqn>,
    /// The solver of the last segment where it ended at its end or at a pause (not at an
    /// event): a segment that starts there with nothing changed goes on with it, its order,
    /// history and step size adaptation intact, rather than at order 1 with a first step of
    /// its own (each pause for an intermediate update would otherwise be a segment of one
    /// step, at the first step's size). Declared before the problem it borrows: dropped first.
    live: Option<Solver<Eqn>>,
    /// The problem `live` borrows, boxed so that it stays where it is while the solver lives.
    problem: Option<Box<OdeSolverProblem<Eqn>>>,
}

/// diffsol's BDF solver on a problem kept beside it ([`Bdf::problem`]).
type Solver<Eqn> = diffsol::Bdf<'static, Eqn, NalgebraLU<f64>>;

impl<Eqn> Bdf<Eqn>
where
    Eqn: Equations,
{
    fn new(rebuild: Rebuild<Eqn>) -> Self {
        Bdf {
            rebuild,
            live: None,
            problem: None,
        }
    }

    /// A solver for a segment from `t0` to `t1`: the live one if it may go on, or a new one on
    /// a problem of its own starting here (a BDF solver built on a kept problem and moved to
    /// this start keeps a Jacobian from elsewhere, and lost accuracy: 3e-11 of the range of the
    /// stiff transmission test's dissipated energy became 1e-6).
    fn solver(&mut self, t0: f64, t1: f64, continues: bool) -> Result<&mut Solver<Eqn>, StepError> {
        if !(continues && self.can_continue(t0)) {
            self.live = None;
            let problem = Box::new((self.rebuild)(t0, t1 - t0).map_err(error_at(t0))?);
            // SAFETY: the solver borrows the boxed problem, whose heap place does not move
            // while `self.problem` holds it; `live` is always cleared before `problem` is
            // replaced or dropped (it is declared first), and nothing else reaches the problem.
            let problem_ref: &'static OdeSolverProblem<Eqn> =
                unsafe { &*(problem.as_ref() as *const OdeSolverProblem<Eqn>) };
            self.problem = Some(problem);
            self.live = Some(problem_ref.bdf::<NalgebraLU<f64>>().map_err(error_at(t0))?);
        }
        let solver = self.live.as_mut().expect("set above");
        solver.set_stop_time(t1).map_err(error_at(t0))?;
        Ok(solver)
    }
}

impl<Eqn> Drop for Bdf<Eqn>
where
    Eqn: Equations,
{
    fn drop(&mut self) {
        // The solver before the problem it borrows.
        self.live = None;
    }
}

fn error_at(t: f64) -> impl Fn(DiffsolError) -> StepError {
    move |e| StepError::Solver(t, e.to_string())
}

impl<Eqn> Stiff for Bdf<Eqn>
where
    Eqn: Equations,
{
    /// The solver's time and the instance's may differ by rounding: a communication point is
    /// the importer's sum, the solver's stop its own.
    fn can_continue(&self, t0: f64) -> bool {
        self.live
            .as_ref()
            .is_some_and(|s| (s.state().t - t0).abs() <= time_epsilon(t0))
    }

    /// A stiff segment with the live solver, or one built for it.
    fn run(
        &mut self,
        t0: f64,
        t1: f64,
        x: &mut [f64],
        h: &mut f64,
        changes_mode: &mut ChangesMode,
        pause: Pause,
        continues: bool,
    ) -> Result<SegmentEnd, StepError> {
        let solver = self.solver(t0, t1, continues)?;
        let t = solver.state().t;
        let mut method = BdfMethod {
            solver,
            changes_mode,
            steps: 0,
            t,
            equations: PhantomData,
        };
        let end = super::segment::run(&mut method, t0, t1, x, h, false, pause);
        let at = match end {
            Ok(SegmentEnd::Reached) => t1,
            Ok(SegmentEnd::Paused(t)) => t,
            _ => f64::NAN,
        };
        if method.solver.state().t != at {
            self.live = None;
        }
        end
    }
}

/// One stiff segment: the solver built for it (on equations `Eqn` borrowed for `'a`) and the
/// test of a crossing.
struct BdfMethod<'a, 'r, 'c, S, Eqn> {
    solver: &'r mut S,
    changes_mode: &'r mut ChangesMode<'c>,
    /// Accepted steps so far.
    steps: usize,
    /// Where the last step ended.
    t: f64,
    equations: PhantomData<&'a Eqn>,
}

/// The solver's states into `x`.
fn copy(y: &Vec64, x: &mut [f64]) {
    for (i, v) in x.iter_mut().enumerate() {
        *v = y.get_index(i);
    }
}

impl<'a, Eqn, S> Method for BdfMethod<'a, '_, '_, S, Eqn>
where
    Eqn: OdeEquationsImplicit<T = f64, V = Vec64, M = NalgebraMat<f64>, C = NalgebraContext> + 'a,
    S: OdeSolverMethod<'a, Eqn>,
{
    /// A new solver starts with its own estimate of the first step; the live one goes on.
    fn start(&mut self, _: f64, _: f64, _: &[f64], _: &mut f64, _: bool) -> Result<(), StepError> {
        Ok(())
    }

    fn at_end(&mut self, _t1: f64, _x: &mut [f64], _h: &mut f64) -> bool {
        false
    }

    fn step(&mut self, t1: f64, x: &mut [f64], h: &mut f64) -> Result<Stepped, StepError> {
        self.steps += 1;
        if self.steps > MAX_INTERNAL_STEPS {
            return Err(too_many_steps(self.solver.state().t));
        }
        let reason = self
            .solver
            .step()
            .map_err(error_at(self.solver.state().t))?;
        let state = self.solver.state();
        for (i, v) in x.iter_mut().enumerate() {
            *v = state.y.get_index(i);
            if !v.is_finite() {
                return Err(not_finite(state.t));
            }
        }
        if state.t + state.h < t1 - time_epsilon(t1) {
            *h = state.h;
        }
        self.t = state.t;
        Ok(match reason {
            OdeSolverStopReason::InternalTimestep => Stepped::Inside,
            OdeSolverStopReason::TstopReached => Stepped::Stop,
            OdeSolverStopReason::RootFound(tr, _) => Stepped::Root(tr),
        })
    }

    fn interpolate(&mut self, t: f64, x: &mut [f64]) -> Result<(), StepError> {
        copy(&self.solver.interpolate(t).map_err(error_at(t))?, x);
        Ok(())
    }

    fn changes_mode(&mut self, t: f64, x: &[f64]) -> bool {
        (self.changes_mode)(t, x)
    }

    /// The solver goes back to the crossing, where the interpolated states are.
    fn land(&mut self, tr: f64, _x: &mut [f64]) -> Result<f64, StepError> {
        self.solver.state_mut_back(tr).map_err(error_at(tr))?;
        Ok(tr)
    }

    fn here(&mut self, _x: &mut [f64], h: &mut f64) -> f64 {
        // `step` left the states of its end in `x`.
        *h = self.solver.state().h;
        self.t
    }

    fn resume(&mut self, t1: f64, x: &mut [f64]) -> Result<bool, StepError> {
        let _ = self.solver.state_mut();
        let reached = t1 - self.t <= time_epsilon(t1) || self.solver.set_stop_time(t1).is_err();
        if reached {
            self.interpolate(t1, x)?;
        }
        Ok(reached)
    }
}
