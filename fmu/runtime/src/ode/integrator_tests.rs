//! The integrator against closed-form solutions, on small test models.
use super::*;
use crate::model::Experiment;
use crate::model::{Indicators, Invalid};
use crate::ode::segment::StepError;
use crate::ode::{dop853::DOP853, tsit5::TSIT5, vern6::VERN6};
use crate::test_models::{Ball, E, G};

/// x'' = -w^2 x at w = 400 rad/s, a crank's pace: over a 1 ms communication step the motion
/// turns 0.4 rad, so the steps are limited by accuracy. `SIXTH`: the model asks for
/// Verner's pair from 1e-6 down. Derivative evaluations are counted across the working
/// copies the integrator makes.
#[derive(Default, Clone)]
struct Oscillator<const SIXTH: bool> {
    x: f64,
    v: f64,
    evaluations: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}
const W: f64 = 400.0;
impl<const SIXTH: bool> crate::declare::Variables for Oscillator<SIXTH> {
    const STATES: usize = 2;
    const ANGLES: u64 = 0;
    type StateIndex = ();
    fn declare<L: crate::declare::Lens<Inner = Self>>(_: &mut Vec<crate::Var<L::Outer>>) {}
    fn get_states(&self, x: &mut [f64]) {
        x.copy_from_slice(&[self.x, self.v]);
    }
    fn set_states(&mut self, x: &[f64]) {
        (self.x, self.v) = (x[0], x[1]);
    }
    fn start_states(&mut self) {}
}
impl<const SIXTH: bool> crate::lift::Equations<f64> for Oscillator<SIXTH> {
    fn derivatives(&self, _t: f64, dx: &mut [f64]) {
        self.evaluations
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        dx.copy_from_slice(&[self.v, -W * W * self.x]);
    }
    fn outputs(&mut self, _t: f64) {}
}

impl<const SIXTH: bool> Model for Oscillator<SIXTH> {
    const NAME: &'static str = "Oscillator";
    const DESCRIPTION: &'static str = "";
    const DOCUMENTATION: &'static str = "";
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0);
    const SIXTH_ORDER_FROM: f64 = if SIXTH { 1e-6 } else { 0.0 };
    fn initialize(&mut self, _t: f64) -> Result<(), Invalid> {
        Ok(())
    }
    type Jets = crate::lift::Unlifted;
}

/// 1 s in 1 ms communication steps at 1e-6: the largest error of x (amplitude 1) and the
/// derivative evaluations per communication step.
fn oscillate<const SIXTH: bool>() -> (f64, f64) {
    let mut model = Oscillator::<SIXTH> {
        x: 1.0,
        ..Default::default()
    };
    let mut integrator = Integrator::<Oscillator<SIXTH>>::new(1e-6);
    let (mut h, mut worst) = (f64::NAN, 0.0f64);
    for k in 0..1000 {
        let (t0, t1) = (k as f64 * 1e-3, (k + 1) as f64 * 1e-3);
        integrator.set_inputs(t0, std::iter::empty());
        integrator
            .integrate(&mut model, t0, t1, &mut h, None)
            .unwrap();
        worst = worst.max((model.x - (W * t1).cos()).abs());
    }
    let evaluations = model.evaluations.load(std::sync::atomic::Ordering::Relaxed);
    (worst, evaluations as f64 / 1000.0)
}

#[test]
fn a_model_limited_by_accuracy_gets_verners_pair_and_goes_further_for_less() {
    assert!(std::ptr::eq(
        explicit_pair::<Oscillator<true>>(1e-6),
        &VERN6
    ));
    assert!(std::ptr::eq(
        explicit_pair::<Oscillator<false>>(1e-6),
        &TSIT5
    ));
    // DOP853 still takes over at tight tolerances.
    assert!(std::ptr::eq(
        explicit_pair::<Oscillator<true>>(1e-10),
        &DOP853
    ));
    let (tsit5, tsit5_cost) = oscillate::<false>();
    let (vern6, vern6_cost) = oscillate::<true>();
    eprintln!(
        "Tsit5: {tsit5:.1e}, {tsit5_cost} evaluations per step; Verner: {vern6:.1e}, {vern6_cost}"
    );
    assert!(vern6 < 1e-5 && vern6 < tsit5, "{vern6:e} against {tsit5:e}");
    assert!(vern6_cost < tsit5_cost, "{vern6_cost} against {tsit5_cost}");
}

#[test]
fn bounce_times_are_located_inside_the_step() {
    // Both explicit pairs (Tsit5 at 1e-8, DOP853 at 1e-11) and BDF, whose crossing is located
    // on its interpolant: the states at the bounce are those there, not the step's end.
    for (rtol, stiff, tol) in [
        (1e-8, false, 1e-8),
        (1e-11, false, 1e-8),
        (1e-8, true, 1e-6),
    ] {
        let mut ball = Ball {
            h: 1.0,
            stiff,
            ..Default::default()
        };
        // One communication step of 1 s holds the first two bounces.
        let t1 = (2.0f64 / G).sqrt();
        let t2 = t1 + 2.0 * E * G * t1 / G;
        let stats = integrate(&mut ball, 0.0, 1.0, rtol).unwrap();
        assert_eq!(stats.state_events, 2);
        assert_eq!(ball.bounces, 2);
        // After the second bounce: v(t2+) = E^2 * G * t1, then free flight to t = 1.
        let v2 = E * E * G * t1;
        let dt = 1.0 - t2;
        assert!(
            (ball.v - (v2 - G * dt)).abs() < tol,
            "{rtol} stiff {stiff}: v = {}",
            ball.v
        );
        let h = v2 * dt - 0.5 * G * dt * dt;
        assert!(
            (ball.h - h).abs() < tol,
            "{rtol} stiff {stiff}: h = {}",
            ball.h
        );
    }
}

/// A model may change modes up to MAX_SEGMENTS times in one step (the message says "more
/// than"); one more is chatter. x' = 1 with an indicator x - next that moves on by `gap` at
/// each crossing: `count` crossings in (0, 1).
#[test]
fn the_chatter_limit_is_the_documented_count() {
    #[derive(Default, Clone)]
    struct Ladder {
        x: f64,
        next: f64,
        gap: f64,
    }
    crate::test_states!(Ladder; x);
    impl crate::lift::Equations<f64> for Ladder {
        fn derivatives(&self, _t: f64, dx: &mut [f64]) {
            dx[0] = 1.0;
        }
        fn outputs(&mut self, _t: f64) {}
    }

    impl Model for Ladder {
        const NAME: &'static str = "Ladder";
        const DESCRIPTION: &'static str = "";
        const DOCUMENTATION: &'static str = "";
        const DEFAULT_EXPERIMENT: Experiment = Ball::DEFAULT_EXPERIMENT;
        const EVENT_INDICATORS: usize = 1;
        fn initialize(&mut self, _t: f64) -> Result<(), Invalid> {
            Ok(())
        }
        fn event_indicators(&self, _t: f64, z: &mut Indicators) {
            z.set(0, self.next - self.x, crate::Side::Positive, 0.0);
        }
        fn event_update(&mut self, _t: f64) -> Result<bool, Invalid> {
            let passed = self.x >= self.next;
            if passed {
                self.next += self.gap;
            }
            Ok(passed)
        }
        type Jets = crate::lift::Unlifted;
    }
    for (count, allowed) in [(MAX_SEGMENTS, true), (MAX_SEGMENTS + 1, false)] {
        let gap = 1.0 / count as f64;
        let mut m = Ladder {
            next: 0.5 * gap,
            gap,
            ..Default::default()
        };
        match integrate(&mut m, 0.0, 1.0, 1e-6) {
            Ok(stats) => {
                assert!(allowed, "{count} crossings accepted");
                assert_eq!(stats.state_events, count);
                assert!((m.x - 1.0).abs() < 1e-9, "x = {}", m.x);
            }
            Err(StepError::Solver(_, why)) => {
                assert!(!allowed, "{count} crossings refused: {why}");
                assert!(why.contains("more than 10000 events"), "{why}");
            }
            Err(e) => panic!("{e:?}"),
        }
    }
}

#[test]
fn event_iteration_that_never_settles_is_an_error() {
    #[derive(Default, Clone)]
    struct Flip(Ball);
    crate::test_states!(Flip;);
    impl crate::lift::Equations<f64> for Flip {
        fn derivatives(&self, _t: f64, _dx: &mut [f64]) {}
        fn outputs(&mut self, _t: f64) {}
    }

    impl Model for Flip {
        const NAME: &'static str = "Flip";
        const DESCRIPTION: &'static str = "";
        const DOCUMENTATION: &'static str = "";
        const DEFAULT_EXPERIMENT: Experiment = Ball::DEFAULT_EXPERIMENT;
        fn initialize(&mut self, _t: f64) -> Result<(), Invalid> {
            Ok(())
        }
        fn event_update(&mut self, _t: f64) -> Result<bool, Invalid> {
            self.0.bounces += 1;
            Ok(true)
        }
        type Jets = crate::lift::Unlifted;
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
    crate::test_states!(StepInput; x);
    impl crate::lift::Equations<f64> for StepInput {
        fn derivatives(&self, _t: f64, dx: &mut [f64]) {
            dx[0] = self.u;
        }
        fn outputs(&mut self, _t: f64) {}
    }

    impl Model for StepInput {
        const NAME: &'static str = "StepInput";
        const DESCRIPTION: &'static str = "";
        const DOCUMENTATION: &'static str = "";
        const DEFAULT_EXPERIMENT: Experiment = Ball::DEFAULT_EXPERIMENT;
        fn initialize(&mut self, _t: f64) -> Result<(), Invalid> {
            Ok(())
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
        type Jets = crate::lift::Unlifted;
    }
    let mut m = StepInput::default();
    let stats = integrate(&mut m, 0.0, 1.0, 1e-8).unwrap();
    assert_eq!(stats.time_events, 1);
    assert!((m.x - 0.7).abs() < 1e-12, "x = {}", m.x);
}
