//! diffsol's BDF (variable order, Newton with a finite-difference Jacobian) as a [`Method`] of
//! the segment loop, for the segments of a model that reports itself stiff.

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

/// The problem starting at `t0` (with step `h0`) from the states of the context's model.
pub fn problem<M: Model>(
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
                    root.borrow_mut()
                        .at(x, t)
                        .event_indicators(t, &mut Indicators::new(z))
                }
            },
            M::EVENT_INDICATORS.max(1),
        )
        .build()
}

/// Integration of a stiff segment, whatever the problem's closure types.
pub trait Stiff {
    /// Runs the segment loop from `t0` with states `x` toward `t1` with a BDF solver built for
    /// it: `x` ends as the states at the segment's end or event, `h` as the step size to try
    /// next.
    fn run(
        &mut self,
        t0: f64,
        t1: f64,
        x: &mut [f64],
        h: &mut f64,
        changes_mode: &mut ChangesMode,
        pause: Pause,
    ) -> Result<SegmentEnd, StepError>;
}

type Vec64 = NalgebraVec<f64>;

pub type Rebuild<Eqn> = Box<dyn Fn(f64, f64) -> Result<OdeSolverProblem<Eqn>, DiffsolError>>;

/// diffsol's BDF, on a problem that starts where the segment does.
pub struct Bdf<Eqn>
where
    Eqn: OdeEquationsImplicit<T = f64, V = Vec64, M = NalgebraMat<f64>, C = NalgebraContext>
        + 'static,
{
    /// A problem starting at a given time and step.
    pub rebuild: Rebuild<Eqn>,
}

fn error_at(t: f64) -> impl Fn(DiffsolError) -> StepError {
    move |e| StepError::Solver(t, e.to_string())
}

impl<Eqn> Stiff for Bdf<Eqn>
where
    Eqn: OdeEquationsImplicit<T = f64, V = Vec64, M = NalgebraMat<f64>, C = NalgebraContext>
        + 'static,
{
    /// A stiff segment with a BDF solver built for it (it allocates).
    fn run(
        &mut self,
        t0: f64,
        t1: f64,
        x: &mut [f64],
        h: &mut f64,
        changes_mode: &mut ChangesMode,
        pause: Pause,
    ) -> Result<SegmentEnd, StepError> {
        // A problem of its own, starting here: a BDF solver built on the kept problem and moved
        // to this start keeps a Jacobian from elsewhere, and lost accuracy (3e-11 of the range
        // of the stiff transmission test's dissipated energy became 1e-6).
        let problem = (self.rebuild)(t0, t1 - t0).map_err(error_at(t0))?;
        let mut solver = problem.bdf::<NalgebraLU<f64>>().map_err(error_at(t0))?;
        solver.set_stop_time(t1).map_err(error_at(t0))?;
        let mut method = BdfMethod {
            solver,
            changes_mode,
            steps: 0,
            t: t0,
            equations: PhantomData,
        };
        super::segment::run(&mut method, t0, t1, x, h, false, pause)
    }
}

/// One stiff segment: the solver built for it (on equations `Eqn` borrowed for `'a`) and the
/// test of a crossing.
struct BdfMethod<'a, 'r, 'c, S, Eqn> {
    solver: S,
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
    /// The solver was built for the segment: it starts with its own estimate of the first step.
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
