use super::*;
use crate::model::Experiment;
use crate::model::{Indicators, Invalid};

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
crate::test_states!(Scalar; x);
impl crate::lift::Equations<f64> for Scalar {
    fn derivatives(&self, t: f64, dx: &mut [f64]) {
        self.calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        dx[0] = (self.f)(t, self.x);
    }
    fn outputs(&mut self, _t: f64) {}
}

impl Model for Scalar {
    const NAME: &'static str = "Scalar";
    const DESCRIPTION: &'static str = "";
    const DOCUMENTATION: &'static str = "";
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0);
    const EVENT_INDICATORS: usize = 1;
    fn stiff(&self) -> bool {
        self.stiff
    }
    fn initialize(&mut self, _t: f64) -> Result<(), Invalid> {
        Ok(())
    }
    // No hysteresis: the integrator's own handling of an indicator at zero is under test.
    fn event_indicators(&self, t: f64, z: &mut Indicators) {
        z.set(0, (self.z)(t, self.x), Side::Positive, 0.0);
    }
    type Jets = crate::lift::Unlifted;
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
