//! Integration over one communication step, with state and time events located inside it.
//!
//! Each segment between events is integrated with diffsol's Tsit45 (explicit Runge-Kutta 5(4)
//! with error control), or with its BDF while the model reports itself stiff. A zero crossing
//! of an event indicator is located by diffsol's root finder
//! (Illinois-modified secant on the dense output, to a few hundred ulp of the time, as tested), the state is
//! moved back to the crossing, the model's event update is repeated until no mode changes, and
//! the integrator restarts from there. The integrator is rebuilt at every step start and at every
//! event, so its whole state is the model state: nothing else needs to be saved in an FMU state
//! for a rollback to reproduce a step bit for bit.

use crate::model::{Invalid, Model};
use diffsol::{NalgebraLU, NalgebraMat, OdeBuilder, OdeSolverMethod, OdeSolverStopReason, Vector};
use std::cell::RefCell;

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

enum SegmentEnd {
    /// The segment's end time, with the states there.
    Reached(Vec<f64>),
    /// A zero crossing that may change a mode, at this time.
    Root(f64, Vec<f64>),
}

/// Integrates `model` from `t0` to `t1`. `inputs(model, t)` sets the inputs to their values at
/// `t` (the runtime extrapolates them with the input derivatives from the master).
pub fn integrate<M: Model>(
    model: &mut M,
    t0: f64,
    t1: f64,
    rtol: f64,
    inputs: &dyn Fn(&mut M, f64),
    log_event: &mut dyn FnMut(&str),
) -> Result<StepStats, StepError> {
    let mut stats = StepStats::default();
    let mut segments = 0;
    let mut t = t0;
    // Inputs may have jumped at the communication point: settle the modes first, because a
    // condition that is already true at the start of a segment is no zero crossing.
    inputs(model, t);
    if event_iteration(model, t)? > 0 {
        log_event(&format!("mode change at the communication point t = {t}"));
    }
    while t1 - t > time_epsilon(t1) {
        let time_event = model.next_time_event(t).filter(|&te| te > t && te < t1);
        let t_stop = time_event.unwrap_or(t1);
        match segment(model, t, t_stop, rtol, inputs)? {
            SegmentEnd::Reached(x) => {
                model.set_states(&x);
                t = t_stop;
                inputs(model, t);
                if time_event.is_some() {
                    stats.time_events += 1;
                    log_event(&format!("time event at t = {t}"));
                    event_iteration(model, t)?;
                }
            }
            SegmentEnd::Root(tr, x) => {
                model.set_states(&x);
                t = tr;
                inputs(model, t);
                // A crossing at rounding level that changes no mode is no event.
                if event_iteration(model, t)? > 0 {
                    stats.state_events += 1;
                    log_event(&format!("state event at t = {t}"));
                }
                segments += 1;
                if segments > MAX_SEGMENTS {
                    return Err(StepError::Solver(
                        t,
                        format!("more than {MAX_SEGMENTS} events in one step: the model chatters"),
                    ));
                }
            }
        }
    }
    Ok(stats)
}

fn segment<M: Model>(
    model: &mut M,
    t0: f64,
    t1: f64,
    rtol: f64,
    inputs: &dyn Fn(&mut M, f64),
) -> Result<SegmentEnd, StepError> {
    let n = M::STATES;
    if n == 0 || t1 - t0 <= time_epsilon(t1) {
        // Nothing to integrate, but event indicators may still change sign with the inputs.
        return Ok(SegmentEnd::Reached(states(model)));
    }
    let x0 = states(model);
    let stiff = model.stiff();
    let solver_error = |e: diffsol::error::DiffsolError| StepError::Solver(t0, e.to_string());
    let cell = RefCell::new(model);
    let evaluate = |x: &[f64], t: f64| {
        let mut guard = cell.borrow_mut();
        let m: &mut M = &mut guard;
        inputs(m, t);
        m.set_states(x);
        guard
    };
    let nroots = M::EVENT_INDICATORS.max(1);
    let problem = OdeBuilder::<NalgebraMat<f64>>::new()
        .t0(t0)
        .h0(t1 - t0)
        .rtol(rtol)
        .atol([rtol * ATOL_PER_RTOL])
        .rhs_implicit(
            |x: &[f64], _p: &[f64], t: f64, dx: &mut [f64]| evaluate(x, t).derivatives(t, dx),
            // Jacobian times v by a forward difference: only the implicit (stiff) solver asks.
            |x: &[f64], _p: &[f64], t: f64, v: &[f64], jv: &mut [f64]| {
                let norm_v = v.iter().fold(0.0f64, |m, a| m.max(a.abs()));
                if norm_v == 0.0 {
                    jv.fill(0.0);
                    return;
                }
                let norm_x = x.iter().fold(0.0f64, |m, a| m.max(a.abs()));
                let eps = f64::EPSILON.sqrt() * (1.0 + norm_x) / norm_v;
                let shifted: Vec<f64> = x.iter().zip(v).map(|(a, b)| a + eps * b).collect();
                let mut f0 = vec![0.0; x.len()];
                evaluate(x, t).derivatives(t, &mut f0);
                evaluate(&shifted, t).derivatives(t, jv);
                for (j, f) in jv.iter_mut().zip(&f0) {
                    *j = (*j - f) / eps;
                }
            },
        )
        .init(
            |_p: &[f64], _t: f64, y: &mut [f64]| y.copy_from_slice(&x0),
            n,
        )
        .root(
            |x: &[f64], _p: &[f64], t: f64, z: &mut [f64]| {
                if M::EVENT_INDICATORS == 0 {
                    z[0] = 1.0; // diffsol wants at least one root function; this one never crosses
                } else {
                    evaluate(x, t).event_indicators(t, z)
                }
            },
            nroots,
        )
        .build()
        .map_err(solver_error)?;
    // An indicator that merely touches zero (diffsol reports a root wherever one is exactly 0)
    // changes no mode: the event is tried on a copy of the model first.
    let changes_mode = |tr: f64, x: &[f64]| {
        let mut probe = cell.borrow().clone();
        probe.set_states(x);
        inputs(&mut probe, tr);
        !matches!(event_iteration(&mut probe, tr), Ok(0))
    };
    // Should diffsol panic (it unwraps some internal errors), that is a failed step, not a
    // broken instance: fmi2Error, and a rollback with fmi2SetFMUstate or a reset recovers.
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if stiff {
            let mut solver = problem.bdf::<NalgebraLU<f64>>().map_err(solver_error)?;
            drive!(solver, t1, changes_mode, solver_error)
        } else {
            let mut solver = problem.tsit45().map_err(solver_error)?;
            drive!(solver, t1, changes_mode, solver_error)
        }
    }));
    run.unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("a panic");
        Err(StepError::Solver(
            t0,
            format!("the integrator failed: {what}"),
        ))
    })
}

/// Steps a diffsol solver to `t1` or to the first zero crossing that changes a mode.
macro_rules! drive {
    ($solver:ident, $t1:expr, $changes_mode:expr, $error:expr) => {{
        $solver.set_stop_time($t1).map_err($error)?;
        let mut steps = 0usize;
        loop {
            steps += 1;
            if steps > MAX_INTERNAL_STEPS {
                // Inputs far outside what the model is made for (1e300 N.m, say) would make the
                // step take forever: give up with a reason instead of hanging the master.
                return Err(StepError::Solver(
                    $solver.state().t,
                    format!("more than {MAX_INTERNAL_STEPS} internal steps in one segment: are the inputs sensible?"),
                ));
            }
            let reason = $solver.step().map_err($error)?;
            let y = $solver.state().y;
            if (0..y.len()).any(|i| !y.get_index(i).is_finite()) {
                return Err(StepError::Solver(
                    $solver.state().t,
                    "the states are no longer finite numbers: are the inputs sensible?".into(),
                ));
            }
            match reason {
                OdeSolverStopReason::InternalTimestep => continue,
                OdeSolverStopReason::TstopReached => {
                    return Ok(SegmentEnd::Reached($solver.state().y.clone_as_vec()));
                }
                OdeSolverStopReason::RootFound(tr, _) => {
                    let x = $solver.interpolate(tr).map_err($error)?.clone_as_vec();
                    if !$changes_mode(tr, &x) {
                        // A touch that changes no mode: go on. diffsol's root finder keeps the
                        // time of its last point but the indicator values at this step's end,
                        // and a later secant could then ask for a time outside the step (diffsol
                        // panics). Marking the state as changed makes diffsol restart the root
                        // finder here. diffsol also returns a root before it limits the next step
                        // to the stop time: set the stop time again, or finish if this step got
                        // there.
                        let _ = $solver.state_mut();
                        if $t1 - $solver.state().t <= time_epsilon($t1)
                            || $solver.set_stop_time($t1).is_err()
                        {
                            let y = $solver.interpolate($t1).map_err($error)?;
                            return Ok(SegmentEnd::Reached(y.clone_as_vec()));
                        }
                        continue;
                    }
                    $solver.state_mut_back(tr).map_err($error)?;
                    return Ok(SegmentEnd::Root(tr, $solver.state().y.clone_as_vec()));
                }
            }
        }
    }};
}
use drive;

fn states<M: Model>(model: &M) -> Vec<f64> {
    let mut x = vec![0.0; M::STATES];
    model.get_states(&mut x);
    x
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
        let stats = integrate(&mut ball, 0.0, 1.0, 1e-10, &|_, _| {}, &mut |_| {}).unwrap();
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
        let stats = integrate(&mut m, 0.0, 1.0, 1e-8, &|_, _| {}, &mut |_| {}).unwrap();
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
    /// `calls` counts right-hand-side evaluations.
    #[derive(Clone)]
    struct Scalar {
        x: f64,
        f: fn(f64, f64) -> f64,
        z: fn(f64, f64) -> f64,
        stiff: bool,
        calls: std::cell::Cell<usize>,
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
            self.calls.set(self.calls.get() + 1);
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
        let stats = integrate(&mut m, 0.0, 1.0, 1e-8, &|_, _| {}, &mut |_| {}).unwrap();
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
        let r = integrate(&mut m, 0.0, 1.0, 1e-8, &|_, _| {}, &mut |_| {});
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
        integrate(&mut m, 0.0, 1.0, 1e-8, &|_, _| {}, &mut |_| {}).unwrap();
        // x = (K^2 cos t + K sin t)/(K^2 + 1) + transient e^{-K t} (gone by t = 1)
        let exact = (K * K * 1f64.cos() + K * 1f64.sin()) / (K * K + 1.0);
        assert!(
            (m.x - exact).abs() < 1e-7,
            "stiff {stiff}: x = {}, exact {exact}",
            m.x
        );
        m.calls.get()
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
