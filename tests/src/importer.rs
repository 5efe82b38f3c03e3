//! The tests' own Model Exchange importer, written once for any one-step method ([`Stepper`]):
//! the inputs set in Event Mode at every communication point and held over the step, event
//! indicators watched after every step, a crossing located by bisection on steps from the last
//! accepted point to 1e-13 s, the FMU's event iteration at each; and the Co-Simulation run it
//! is compared with. The explicit importer (`tests/tests/model_exchange.rs`) steps with
//! Dormand-Prince 5(4), the implicit one (`tests/tests/implicit_importer.rs`) with Rodas3.

use crate::implicit::{JacobianSource, Matrix, Problem, Rodas3};
use crate::ode::{dormand_prince, next_step_factor};
use crate::scenario::Scenario;
use crate::structure::structure;
use crate::{Fmu, Instance, OK};
use model_description::{Causality, VariableType};

pub fn real_outputs(fmu: &Fmu) -> Vec<String> {
    fmu.md
        .model_variables
        .iter()
        .filter(|v| v.causality == Causality::Output && matches!(v.kind, VariableType::Real { .. }))
        .map(|v| v.name.clone())
        .collect()
}

pub fn outputs(inst: &Instance, names: &[String]) -> Vec<f64> {
    names.iter().map(|n| inst.real(n)).collect()
}

/// A run: the outputs at every communication point after the start, and the event times.
pub struct Run {
    pub rows: Vec<Vec<f64>>,
    pub events: Vec<f64>,
}

/// The Co-Simulation run at a tight tolerance: outputs after every step, and event times.
pub fn co_simulation(fmu: &Fmu, sc: &Scenario, names: &[String]) -> Run {
    let inst = fmu.instantiate("cs");
    let tol = fmu
        .md
        .default_experiment
        .as_ref()
        .map_or(1e-10, |d| d.tolerance.min(1e-10));
    assert_eq!(inst.setup_experiment(Some(tol), 0.0, None), OK);
    sc.set_parameters(&inst);
    assert_eq!(inst.enter_initialization_mode(), OK);
    assert_eq!(inst.exit_initialization_mode(), OK, "{}", inst.log_text());
    let n = (sc.stop / sc.step).round() as usize;
    let mut rows = vec![];
    for k in 0..n {
        let t = k as f64 * sc.step;
        sc.set_inputs(&inst, t);
        assert_eq!(inst.do_step(t, sc.step), OK, "{}", inst.log_text());
        rows.push(outputs(&inst, names));
    }
    Run {
        rows,
        events: inst.event_times(),
    }
}

/// The largest deviation of run `b` from run `a` over the outputs `names`, each relative to
/// its largest magnitude in `a` (plus 1e-3), and where it is. Communication points with an
/// event of either run are skipped: Co-Simulation reports the outputs before its update, an
/// ME importer may report them after.
pub fn largest_deviation(names: &[String], a: &Run, b: &Run, step: f64) -> (f64, String) {
    let mut worst = (0.0f64, String::new());
    for (j, n) in names.iter().enumerate() {
        let size = a.rows.iter().map(|r| r[j].abs()).fold(0.0, f64::max);
        for (k, (ra, rb)) in a.rows.iter().zip(&b.rows).enumerate() {
            let tk = (k + 1) as f64 * step;
            if a.events
                .iter()
                .chain(&b.events)
                .any(|e| (e - tk).abs() < 1e-9)
            {
                continue;
            }
            let dev = (ra[j] - rb[j]).abs() / (size + 1e-3);
            if dev > worst.0 {
                worst = (dev, format!("{n} at step {k}: {} vs {}", ra[j], rb[j]));
            }
        }
    }
    worst
}

/// The state derivatives at (t, x).
pub fn derivatives_at(inst: &Instance, t: f64, x: &[f64]) -> Vec<f64> {
    assert_eq!(inst.set_time(t), OK);
    assert_eq!(inst.set_continuous_states(x), OK, "{}", inst.log_text());
    let (s, dx) = inst.derivatives();
    assert_eq!(s, OK, "t = {t}: {}", inst.log_text());
    dx
}

/// A one-step method over the FMU's states.
pub trait Stepper {
    /// The order in h of the error estimate: the step size scales as err^(-1 / ERROR_ORDER).
    const ERROR_ORDER: i32;

    /// One step of size `h` from (t, x): the new states and the error norm (accepted up to 1).
    fn step(&mut self, inst: &Instance, t: f64, x: &[f64], h: f64) -> (Vec<f64>, f64);

    /// The FMU changed at the same time and states (an event, new inputs): nothing the method
    /// kept of it holds.
    fn restart(&mut self) {}
}

/// The explicit Dormand-Prince 5(4) pair, error relative to `rtol`.
pub struct DormandPrince {
    pub rtol: f64,
}

impl Stepper for DormandPrince {
    const ERROR_ORDER: i32 = 5;

    fn step(&mut self, inst: &Instance, t: f64, x: &[f64], h: f64) -> (Vec<f64>, f64) {
        dormand_prince(|t, x| derivatives_at(inst, t, x), t, x, h, self.rtol)
    }
}

/// Rodas3 ([`crate::implicit`]) with the Jacobian from the FMU's fmi2GetDirectionalDerivative
/// or from differences of fmi2GetDerivatives. df/dt is taken as zero: the importer holds the
/// inputs over the step, and the models' derivatives do not read the time (which
/// `tests/tests/implicit_importer.rs` checks on every scenario).
pub struct Implicit {
    pub rodas: Rodas3,
    states: Vec<u32>,
    derivatives: Vec<u32>,
}

impl Implicit {
    /// The error relative to `rtol` with `rtol * 1e-3` absolute, as the explicit importer's.
    pub fn new(fmu: &Fmu, rtol: f64, source: JacobianSource) -> Implicit {
        let s = structure(&fmu.md);
        Implicit {
            rodas: Rodas3::new(rtol, rtol * 1e-3, source),
            states: s.states,
            derivatives: s.derivatives,
        }
    }
}

/// The FMU as Rodas3's problem.
struct FmuProblem<'i, 'a> {
    inst: &'i Instance<'a>,
    states: &'i [u32],
    derivatives: &'i [u32],
}

impl Problem for FmuProblem<'_, '_> {
    fn rhs(&mut self, t: f64, x: &[f64]) -> Vec<f64> {
        derivatives_at(self.inst, t, x)
    }

    /// One directional derivative per column: the derivatives along each state.
    fn jacobian(&mut self, t: f64, x: &[f64]) -> Option<Matrix> {
        assert_eq!(self.inst.set_time(t), OK);
        assert_eq!(self.inst.set_continuous_states(x), OK);
        let mut jac = Matrix::zeros(x.len());
        let mut column = vec![0.0; x.len()];
        for (j, state) in self.states.iter().enumerate() {
            let status =
                self.inst
                    .directional_derivative(self.derivatives, &[*state], &[1.0], &mut column);
            assert_eq!(status, OK, "t = {t}: {}", self.inst.log_text());
            jac.set_column(j, &column);
        }
        Some(jac)
    }
}

impl Stepper for Implicit {
    const ERROR_ORDER: i32 = crate::implicit::ERROR_ORDER;

    fn step(&mut self, inst: &Instance, t: f64, x: &[f64], h: f64) -> (Vec<f64>, f64) {
        let mut p = FmuProblem {
            inst,
            states: &self.states,
            derivatives: &self.derivatives,
        };
        self.rodas.step(&mut p, t, x, h)
    }

    fn restart(&mut self) {
        self.rodas.restart();
    }
}

/// A Model Exchange importer stepping with `S`.
pub struct Importer<'a, S: Stepper> {
    pub inst: Instance<'a>,
    pub events: Vec<f64>,
    pub stepper: S,
    /// The step size the integration ended with, the next one's first try.
    h: Option<f64>,
}

impl<S: Stepper> Importer<'_, S> {
    fn indicators(&self, t: f64, x: &[f64]) -> Vec<f64> {
        assert_eq!(self.inst.set_time(t), OK);
        assert_eq!(self.inst.set_continuous_states(x), OK);
        let (s, z) = self.inst.event_indicators();
        assert_eq!(s, OK);
        z
    }

    fn step(&mut self, t: f64, x: &[f64], h: f64) -> (Vec<f64>, f64) {
        self.stepper.step(&self.inst, t, x, h)
    }

    /// Whether an indicator changed sign from `a` to `b` (one that starts at exactly zero, as
    /// after the event that put it there, has not).
    fn crossed(a: &[f64], b: &[f64]) -> bool {
        a.iter()
            .zip(b)
            .any(|(a, b)| *a != 0.0 && (*a > 0.0) != (*b > 0.0))
    }

    /// The event iteration in Event Mode (recorded as an event if it changed anything); the
    /// states after it.
    fn event(&mut self, t: f64, x: &[f64], inputs: Option<&Scenario>) -> Vec<f64> {
        self.stepper.restart();
        assert_eq!(self.inst.set_time(t), OK);
        assert_eq!(self.inst.set_continuous_states(x), OK);
        assert_eq!(self.inst.enter_event_mode(), OK);
        // Discrete inputs change in Event Mode only.
        if let Some(sc) = inputs {
            sc.set_inputs(&self.inst, t);
        }
        let mut reset = false;
        for updates in 0.. {
            let (s, info) = self.inst.new_discrete_states();
            assert_eq!(s, OK, "t = {t}: {}", self.inst.log_text());
            reset |= info.values_of_continuous_states_changed != 0;
            if info.new_discrete_states_needed == 0 {
                if updates > 0 {
                    self.events.push(t);
                }
                break;
            }
        }
        let (_, after) = self.inst.continuous_states();
        if !reset {
            assert_eq!(
                after, x,
                "t = {t}: the states changed without valuesOfContinuousStatesChanged"
            );
        }
        assert_eq!(self.inst.enter_continuous_time_mode(), OK);
        after
    }

    /// From communication point `t` with states `x` to `t + dt`: the scenario's inputs at `t`
    /// set in Event Mode (an event, as for a time event) and held, the integrator step
    /// completed, the instance left at `t + dt` and the states returned.
    pub fn communicate(&mut self, sc: &Scenario, t: f64, dt: f64, x: Vec<f64>) -> Vec<f64> {
        let x = self.event(t, &x, Some(sc));
        let mut h = self.h.unwrap_or(sc.step / 10.0);
        let x = self.integrate(t, t + dt, x, &mut h);
        self.h = Some(h);
        let (s, enter, stop) = self.inst.completed_integrator_step();
        assert_eq!((s, enter, stop), (OK, 0, 0));
        assert_eq!(self.inst.set_time(t + dt), OK);
        assert_eq!(self.inst.set_continuous_states(&x), OK);
        x
    }
    /// Integrates from `t0` to `t1` with the inputs held, events located and handled.
    fn integrate(&mut self, t0: f64, t1: f64, mut x: Vec<f64>, h: &mut f64) -> Vec<f64> {
        let mut t = t0;
        let mut z = self.indicators(t, &x);
        while t < t1 - 1e-13 {
            let dt = h.min(t1 - t);
            let (y, err) = self.step(t, &x, dt);
            if err > 1.0 {
                *h = dt * next_step_factor(err, S::ERROR_ORDER);
                continue;
            }
            let zy = self.indicators(t + dt, &y);
            if Self::crossed(&z, &zy) {
                // Bisection on single steps from t: the first crossing to 1e-13 s.
                let (mut lo, mut hi) = (0.0, dt);
                while hi - lo > 1e-13 {
                    let mid = 0.5 * (lo + hi);
                    let (ym, _) = self.step(t, &x, mid);
                    if Self::crossed(&z, &self.indicators(t + mid, &ym)) {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                let (ye, _) = self.step(t, &x, hi);
                t += hi;
                x = self.event(t, &ye, None);
                z = self.indicators(t, &x);
                assert!(self.events.len() < 100_000, "chattering");
                continue;
            }
            t += dt;
            x = y;
            z = zy;
            // Not beyond the communication step: inputs change there.
            *h = (dt * next_step_factor(err, S::ERROR_ORDER)).min(t1 - t0);
        }
        x
    }
}

/// The importer at the start of `sc`: instantiated for Model Exchange, the scenario's
/// parameters set, initialized, the first event iteration done, in Continuous-Time Mode; and
/// its states.
pub fn start<'a, S: Stepper>(
    fmu: &'a Fmu,
    sc: &Scenario,
    stepper: S,
) -> (Importer<'a, S>, Vec<f64>) {
    let inst = fmu.instantiate_me("me");
    assert_eq!(inst.setup_experiment(None, 0.0, None), OK);
    sc.set_parameters(&inst);
    assert_eq!(inst.enter_initialization_mode(), OK);
    // Inputs from t = 0 on, as the Co-Simulation run gets them: after initialization.
    assert_eq!(inst.exit_initialization_mode(), OK, "{}", inst.log_text());
    let me = Importer {
        inst,
        events: vec![],
        stepper,
        h: None,
    };
    let (s, _) = me.inst.event_iteration();
    assert_eq!(s, OK);
    assert_eq!(me.inst.enter_continuous_time_mode(), OK);
    let (_, x) = me.inst.continuous_states();
    (me, x)
}

/// The scenario run by the importer stepping with `stepper`: the outputs at every
/// communication point, the events, and the stepper (with what it counted).
pub fn model_exchange<S: Stepper>(
    fmu: &Fmu,
    sc: &Scenario,
    names: &[String],
    stepper: S,
) -> (Run, S) {
    let (mut me, mut x) = start(fmu, sc, stepper);
    let n = (sc.stop / sc.step).round() as usize;
    let mut rows = vec![];
    for k in 0..n {
        x = me.communicate(sc, k as f64 * sc.step, sc.step, x);
        rows.push(outputs(&me.inst, names));
    }
    let run = Run {
        rows,
        events: me.events,
    };
    (run, me.stepper)
}

/// The importer of [`start`] run through the scenario's communication points up to `at`
/// (the last step shortened to end there), the scenario's inputs at `at` set there in Event
/// Mode, left in Continuous-Time Mode.
pub fn run_until<'a, S: Stepper>(
    fmu: &'a Fmu,
    sc: &Scenario,
    at: f64,
    stepper: S,
) -> Importer<'a, S> {
    let (mut me, mut x) = start(fmu, sc, stepper);
    let mut k = 0;
    while (k as f64) * sc.step < at - 1e-12 {
        let t = k as f64 * sc.step;
        x = me.communicate(sc, t, sc.step.min(at - t), x);
        k += 1;
    }
    me.event(at, &x, Some(sc));
    me
}
