//! Model Exchange as root-finding importers run it (CVode in FMPy, Dymola and OpenModelica's
//! solvers, IDA, DASSL, SciPy's `solve_ivp`): one integration across the communication points,
//! never restarted there, with the inputs smooth functions of time set at every evaluation;
//! events found by sign changes of the indicators between nonzero values only, an indicator
//! that starts at exactly zero ignored until it has moved away from zero (CVode's rule). Every
//! FMU from rest with every input ramping from its start value (from zero where it may be), and
//! every reference scenario whose inputs are continuous, must give the Co-Simulation results
//! (the same inputs, as fmi2SetRealInputDerivatives ramps) within 1e-6, with the same events,
//! and each reference scenario's independent solution for interpolated inputs
//! (`<Model>_ref_interpolated.csv`) within 1e-6; after every event iteration no indicator may
//! be left at exactly zero. The FMI 3.0 FMU, run by the same importer through FMI 3.0's Model
//! Exchange functions, must give the FMI 2.0 run bit for bit: the same rows, events and
//! indicators.
//!
//! A second importer reports every root on the near side of the crossing, within 4 ulp of
//! time (as SciPy's `brentq` on a dense output does; CVode reports the far side): the event
//! update there must still see the crossing, so that no event repeats at one time, and the
//! run must give the first importer's results and events. The crank also runs fast (from
//! 300 rad/s), where one ulp of its angle exceeds a fixed band around its dead centres.

use fmu_harness::fmi3::{Fmu3, Instance3};
use fmu_harness::importer::real_outputs;
use fmu_harness::ode::dormand_prince;
use fmu_harness::scenario::{scenarios, Scenario};
use fmu_harness::{Fmu, Instance, OK};
use model_description::VariableType;
use std::path::PathBuf;

/// Tolerance of the importer's Dormand-Prince 5(4) and of the Co-Simulation run.
const RTOL: f64 = 1e-12;

/// From rest (parameters), every input `u = start + slope t` over one second.
struct Ramps {
    model: &'static str,
    parameters: &'static [(&'static str, f64)],
    inputs: &'static [(&'static str, f64, f64)],
}

/// The engine pulling from zero (the chain, just taut at rest, must tighten), a growing road
/// load and brake.
const CHAIN_RAMPS: &[(&str, f64, f64)] = &[
    ("tau_eng", 0.0, 150.0),
    ("tau_load", 0.0, -20.0),
    ("c_brake", 0.0, 0.05),
];

/// Slopes chosen so that every FMU's modes switch inside the second: the LossyGear breaks away
/// and sticks again, the crank passes dead centres, the CVT's sheaves reach a stop, the power
/// flow of the variable-ratio FMUs turns, the chain goes taut.
const RAMPS: &[Ramps] = &[
    Ramps {
        model: "Gear",
        parameters: &[],
        inputs: &[("tau_a", 0.0, 0.5), ("tau_b", 0.0, -0.3)],
    },
    Ramps {
        model: "LossyGear",
        parameters: &[("w_b_start", 0.0)],
        inputs: &[("tau_a", 0.0, 20.0), ("tau_b", 0.0, 1.0)],
    },
    Ramps {
        model: "CrankSlider",
        parameters: &[],
        inputs: &[("tau", 0.0, 3.0), ("f", 0.0, -20.0)],
    },
    Ramps {
        model: "CrankSlider",
        parameters: &[("w_start", 300.0), ("phi_start", 600.0)],
        inputs: &[("tau", 0.0, 3.0), ("f", 0.0, -20.0)],
    },
    Ramps {
        model: "CVT",
        parameters: &[],
        inputs: &[
            ("tau_1", 0.0, 0.2),
            ("tau_2", 0.0, -0.1),
            ("F_1", 0.0, 100.0),
            ("F_2", 0.0, 20.0),
        ],
    },
    Ramps {
        model: "VariableRatioTransmission",
        parameters: &[],
        inputs: &[
            ("tau_B_ext", 0.0, 2.0),
            ("tau_F_ext", 0.0, -3.0),
            ("r", 1.0, 0.5),
        ],
    },
    Ramps {
        model: "VariableRatioCoupling",
        parameters: &[],
        inputs: &[("w_B", 0.0, 10.0), ("w_F", 0.0, 12.0), ("r", 1.0, 0.5)],
    },
    Ramps {
        model: "FastDrivetrain",
        parameters: &[],
        inputs: &[
            ("tau_eng", 0.0, 40.0),
            ("tau_ext", 0.0, -20.0),
            ("omega_x", 0.0, 0.5),
            ("omega_y", 0.0, 0.2),
            ("omega_z", 0.0, 0.1),
        ],
    },
    Ramps {
        model: "ChainDrive",
        parameters: &[("chain_model", 1.0)],
        inputs: CHAIN_RAMPS,
    },
    Ramps {
        model: "ChainDrive",
        parameters: &[("chain_model", 2.0)],
        inputs: CHAIN_RAMPS,
    },
    Ramps {
        model: "ChainDrive",
        parameters: &[("chain_model", 3.0)],
        inputs: CHAIN_RAMPS,
    },
];

impl Ramps {
    fn scenario(&self) -> Scenario {
        let stop = 1.0;
        Scenario {
            dir: PathBuf::from(format!("(ramps {:?})", self.parameters)),
            names: self.inputs.iter().map(|i| i.0.to_string()).collect(),
            integers: vec![false; self.inputs.len()],
            rows: [0.0, stop]
                .iter()
                .map(|&t| {
                    std::iter::once(t)
                        .chain(self.inputs.iter().map(|(_, u0, du)| u0 + du * t))
                        .collect()
                })
                .collect(),
            params: self
                .parameters
                .iter()
                .map(|(n, v)| (n.to_string(), *v))
                .collect(),
            stop,
            step: 1e-3,
            tol: RTOL,
        }
    }
}

/// A run's outputs at every communication point, its event times, and what went wrong on the
/// way (indicators left at zero).
struct Run {
    rows: Vec<Vec<f64>>,
    events: Vec<f64>,
    zeros: Vec<String>,
    /// Event iterations at a root that changed nothing.
    repeats: Vec<f64>,
}

/// Co-Simulation with the inputs as ramps over each step (fmi2SetRealInputDerivatives), so
/// that it sees the same input functions as the Model Exchange run.
fn co_simulation(fmu: &Fmu, sc: &Scenario, names: &[String]) -> Run {
    let inst = fmu.instantiate("cs");
    assert_eq!(inst.setup_experiment(Some(RTOL), 0.0, None), OK);
    sc.set_parameters(&inst);
    assert_eq!(inst.enter_initialization_mode(), OK);
    sc.set_inputs(&inst, 0.0);
    assert_eq!(inst.exit_initialization_mode(), OK, "{}", inst.log_text());
    let vrs: Vec<_> = sc.names.iter().map(|n| fmu.vr(n)).collect();
    let n = (sc.stop / sc.step).round() as usize;
    let mut rows = vec![];
    for k in 0..n {
        let t = k as f64 * sc.step;
        sc.set_inputs(&inst, t);
        let orders = vec![1; vrs.len()];
        let status = inst.set_input_derivatives(&vrs, &orders, &sc.slopes_at(t));
        assert_eq!(status, OK, "{}", inst.log_text());
        assert_eq!(inst.do_step(t, sc.step), OK, "{}", inst.log_text());
        rows.push(names.iter().map(|n| inst.real(n)).collect());
    }
    Run {
        rows,
        events: inst.event_times(),
        zeros: vec![],
        repeats: vec![],
    }
}

/// What the importer calls, in FMI 2.0 or FMI 3.0.
trait ModelExchange {
    fn set_time(&self, t: f64) -> i32;
    fn set_input(&self, name: &str, value: f64) -> i32;
    fn set_continuous_states(&self, x: &[f64]) -> i32;
    fn derivatives(&self) -> (i32, Vec<f64>);
    fn event_indicators(&self) -> (i32, Vec<f64>);
    fn continuous_states(&self) -> (i32, Vec<f64>);
    fn enter_event_mode(&self) -> i32;
    /// One update of the event iteration: status, whether another is needed.
    fn update(&self) -> (i32, bool);
    fn enter_continuous_time_mode(&self) -> i32;
    fn real(&self, name: &str) -> f64;
    fn log_text(&self) -> String;
}

impl ModelExchange for Instance<'_> {
    fn set_time(&self, t: f64) -> i32 {
        Instance::set_time(self, t)
    }
    fn set_input(&self, name: &str, value: f64) -> i32 {
        self.set(name, value)
    }
    fn set_continuous_states(&self, x: &[f64]) -> i32 {
        Instance::set_continuous_states(self, x)
    }
    fn derivatives(&self) -> (i32, Vec<f64>) {
        Instance::derivatives(self)
    }
    fn event_indicators(&self) -> (i32, Vec<f64>) {
        Instance::event_indicators(self)
    }
    fn continuous_states(&self) -> (i32, Vec<f64>) {
        Instance::continuous_states(self)
    }
    fn enter_event_mode(&self) -> i32 {
        Instance::enter_event_mode(self)
    }
    fn update(&self) -> (i32, bool) {
        let (s, info) = self.new_discrete_states();
        (s, info.new_discrete_states_needed != 0)
    }
    fn enter_continuous_time_mode(&self) -> i32 {
        Instance::enter_continuous_time_mode(self)
    }
    fn real(&self, name: &str) -> f64 {
        Instance::real(self, name)
    }
    fn log_text(&self) -> String {
        Instance::log_text(self)
    }
}

impl ModelExchange for Instance3<'_> {
    fn set_time(&self, t: f64) -> i32 {
        Instance3::set_time(self, t)
    }
    fn set_input(&self, name: &str, value: f64) -> i32 {
        self.set(name, value)
    }
    fn set_continuous_states(&self, x: &[f64]) -> i32 {
        Instance3::set_continuous_states(self, x)
    }
    fn derivatives(&self) -> (i32, Vec<f64>) {
        Instance3::derivatives(self)
    }
    fn event_indicators(&self) -> (i32, Vec<f64>) {
        Instance3::event_indicators(self)
    }
    fn continuous_states(&self) -> (i32, Vec<f64>) {
        Instance3::continuous_states(self)
    }
    fn enter_event_mode(&self) -> i32 {
        Instance3::enter_event_mode(self)
    }
    fn update(&self) -> (i32, bool) {
        let (s, needed, _, _) = self.update_discrete_states();
        (s, needed)
    }
    fn enter_continuous_time_mode(&self) -> i32 {
        Instance3::enter_continuous_time_mode(self)
    }
    fn real(&self, name: &str) -> f64 {
        Instance3::real(self, name)
    }
    fn log_text(&self) -> String {
        Instance3::log_text(self)
    }
}

/// A Model Exchange importer that integrates like CVode.
struct Importer<'a, I: ModelExchange> {
    inst: I,
    sc: &'a Scenario,
    /// Indicators at the last accepted point, and whether each is watched: one that was
    /// exactly zero there is ignored until it is nonzero (then watched from that value).
    z: Vec<f64>,
    active: Vec<bool>,
    events: Vec<f64>,
    zeros: Vec<String>,
    /// Roots reported on the near side of the crossing (else the far side).
    near_side: bool,
    /// Where the event update found nothing to change at a root: the root finder will find the
    /// same root again.
    repeats: Vec<f64>,
}

impl<I: ModelExchange> Importer<'_, I> {
    /// Time, inputs at that time, states: what every evaluation sets.
    fn at(&self, t: f64, x: &[f64]) {
        assert_eq!(self.inst.set_time(t), OK);
        for (n, v) in self.sc.names.iter().zip(self.sc.inputs_at(t)) {
            assert_eq!(self.inst.set_input(n, v), OK, "{n} = {v} at t = {t}");
        }
        let status = self.inst.set_continuous_states(x);
        assert_eq!(status, OK, "{}", self.inst.log_text());
    }

    fn rhs(&self, t: f64, x: &[f64]) -> Vec<f64> {
        self.at(t, x);
        let (s, dx) = self.inst.derivatives();
        assert_eq!(s, OK, "t = {t}: {}", self.inst.log_text());
        dx
    }

    fn indicators(&self, t: f64, x: &[f64]) -> Vec<f64> {
        self.at(t, x);
        let (s, z) = self.inst.event_indicators();
        assert_eq!(s, OK, "t = {t}: {}", self.inst.log_text());
        z
    }

    /// One Dormand-Prince 5(4) step through the FMU's derivatives.
    fn dp5(&self, t: f64, x: &[f64], h: f64) -> (Vec<f64>, f64) {
        dormand_prince(|t, x| self.rhs(t, x), t, x, h, RTOL)
    }

    /// CVode's test: a watched indicator that changed sign, or reached exactly zero.
    fn root(&self, z: &[f64]) -> bool {
        self.z
            .iter()
            .zip(z)
            .zip(&self.active)
            .any(|((a, b), on)| *on && (*b == 0.0 || a * b < 0.0))
    }

    /// Watches the indicators from the point `x` at `t` on (after an event: CVode's restart).
    fn restart(&mut self, t: f64, x: &[f64]) {
        self.z = self.indicators(t, x);
        self.active = self.z.iter().map(|z| *z != 0.0).collect();
        if let Some(i) = self.z.iter().position(|z| *z == 0.0) {
            self.zeros
                .push(format!("indicator {i} is exactly zero at t = {t}"));
        }
    }

    /// Moves the watch to an accepted point: indicators that left zero are watched again.
    fn accept(&mut self, z: Vec<f64>) {
        for (on, z) in self.active.iter_mut().zip(&z) {
            *on |= *z != 0.0;
        }
        self.z = z;
    }

    /// The event iteration at `t`, `x`; the states after it. Entered at a root: an iteration
    /// that changes nothing is recorded as a repeat.
    fn event(&mut self, t: f64, x: &[f64]) -> Vec<f64> {
        self.at(t, x);
        assert_eq!(self.inst.enter_event_mode(), OK);
        let mut changed = false;
        for _ in 0..1000 {
            let (s, needed) = self.inst.update();
            assert_eq!(s, OK, "t = {t}: {}", self.inst.log_text());
            if !needed {
                break;
            }
            changed = true;
        }
        if changed {
            self.events.push(t);
        } else {
            self.repeats.push(t);
        }
        assert_eq!(self.inst.enter_continuous_time_mode(), OK);
        let (_, x) = self.inst.continuous_states();
        self.restart(t, &x);
        x
    }

    /// Integrates from 0 to the scenario's stop time in one run, outputs at every
    /// communication point (steps end there, but nothing restarts).
    fn run(&mut self, names: &[String]) -> Vec<Vec<f64>> {
        let (_, mut x) = self.inst.continuous_states();
        self.restart(0.0, &x);
        let n = (self.sc.stop / self.sc.step).round() as usize;
        let (mut t, mut h, mut rows) = (0.0, 1e-4f64, vec![]);
        for k in 1..=n {
            let tk = k as f64 * self.sc.step;
            while t < tk - 1e-13 {
                assert!(self.events.len() < 10_000, "chattering");
                if self.repeats.len() > 20 {
                    // The same root found again and again: stop, the test reports it.
                    break;
                }
                let dt = h.min(tk - t);
                let (y, err) = self.dp5(t, &x, dt);
                if err > 1.0 {
                    h = dt * (0.9 * err.powf(-0.2)).max(0.2);
                    continue;
                }
                let zy = self.indicators(t + dt, &y);
                if self.root(&zy) {
                    // Bisection on single steps from t, to 1e-13 s (the near side: to 4 ulp of
                    // time).
                    let width = |hi: f64| match self.near_side {
                        true => 4.0 * ulp(t + hi),
                        false => 1e-13,
                    };
                    let (mut lo, mut hi) = (0.0, dt);
                    while hi - lo > width(hi) {
                        let mid = 0.5 * (lo + hi);
                        let (ym, _) = self.dp5(t, &x, mid);
                        if self.root(&self.indicators(t + mid, &ym)) {
                            hi = mid;
                        } else {
                            lo = mid;
                        }
                    }
                    let at = if self.near_side { lo } else { hi };
                    let (ye, _) = self.dp5(t, &x, at);
                    t += at;
                    x = self.event(t, &ye);
                    continue;
                }
                t += dt;
                x = y;
                self.accept(zy);
                if dt == h {
                    h = dt * (0.9 * err.max(1e-10).powf(-0.2)).min(5.0);
                }
            }
            t = tk;
            self.at(t, &x);
            rows.push(names.iter().map(|n| self.inst.real(n)).collect());
        }
        rows
    }
}

/// The distance from `t` to the next larger float.
fn ulp(t: f64) -> f64 {
    let t = t.abs();
    f64::from_bits(t.to_bits() + 1) - t
}

fn model_exchange(fmu: &Fmu, sc: &Scenario, names: &[String], near_side: bool) -> Run {
    let inst = fmu.instantiate_me("me");
    assert_eq!(inst.setup_experiment(None, 0.0, None), OK);
    sc.set_parameters(&inst);
    assert_eq!(inst.enter_initialization_mode(), OK);
    sc.set_inputs(&inst, 0.0);
    assert_eq!(inst.exit_initialization_mode(), OK, "{}", inst.log_text());
    let (s, _) = inst.event_iteration();
    assert_eq!(s, OK, "{}", inst.log_text());
    assert_eq!(inst.enter_continuous_time_mode(), OK);
    import(inst, sc, names, near_side)
}

/// The same run through FMI 3.0.
fn model_exchange3(fmu: &Fmu3, fmu2: &Fmu, sc: &Scenario, names: &[String]) -> Run {
    let inst = fmu.model_exchange();
    for (n, v) in &sc.params {
        let integer = fmu2
            .md
            .variable(n)
            .is_some_and(|v| matches!(v.kind, VariableType::Integer { .. }));
        let s = if integer {
            inst.set_int(n, *v as i32)
        } else {
            inst.set(n, *v)
        };
        assert_eq!(s, OK, "{n}");
    }
    assert_eq!(inst.enter_initialization_mode(None, 0.0, sc.stop), OK);
    for (n, v) in sc.names.iter().zip(sc.inputs_at(0.0)) {
        assert_eq!(inst.set(n, v), OK);
    }
    assert_eq!(inst.exit_initialization_mode(), OK, "{}", inst.log_text());
    assert_eq!(inst.event_iteration(), OK, "{}", inst.log_text());
    assert_eq!(inst.enter_continuous_time_mode(), OK);
    import(inst, sc, names, false)
}

fn import<I: ModelExchange>(inst: I, sc: &Scenario, names: &[String], near_side: bool) -> Run {
    let mut me = Importer {
        inst,
        sc,
        z: vec![],
        active: vec![],
        events: vec![],
        zeros: vec![],
        near_side,
        repeats: vec![],
    };
    let rows = me.run(names);
    Run {
        rows,
        events: me.events,
        zeros: me.zeros,
        repeats: me.repeats,
    }
}

/// The largest deviation of `b` from `a`, per signal relative to its largest magnitude (plus
/// 1e-3), with where it is.
fn deviation(names: &[String], a: &[Vec<f64>], b: &[Vec<f64>]) -> (f64, String) {
    let mut worst = (0.0f64, String::new());
    for (j, n) in names.iter().enumerate() {
        let size = a.iter().map(|r| r[j].abs()).fold(0.0, f64::max);
        for (k, (a, b)) in a.iter().zip(b).enumerate() {
            let dev = (a[j] - b[j]).abs() / (size + 1e-3);
            if dev > worst.0 || dev.is_nan() {
                worst = (dev, format!("{n} at step {k}: CS {} ME {}", a[j], b[j]));
            }
        }
    }
    worst
}

/// The deviation of a run (`rows` at the communication points) from an independent reference:
/// the largest `|sim - ref|` relative to the signal's largest magnitude, over the reference's
/// points after the start, and where.
fn against_reference(
    names: &[String],
    step: f64,
    rows: &[Vec<f64>],
    (columns, reference): &(Vec<String>, Vec<Vec<f64>>),
) -> (f64, String) {
    let mut worst = (0.0f64, String::new());
    for (c, name) in columns.iter().enumerate().skip(1) {
        // Real outputs; the Integer ones (modes) are judged by the validation.
        let Some(j) = names.iter().position(|n| n == name) else {
            continue;
        };
        let size = reference.iter().map(|r| r[c].abs()).fold(0.0, f64::max);
        for r in reference.iter().filter(|r| r[0] > 0.0) {
            let k = (r[0] / step).round() as usize - 1;
            let dev = (rows[k][j] - r[c]).abs() / (size + 1e-3);
            if dev > worst.0 || dev.is_nan() {
                worst = (
                    dev,
                    format!("{name} at t = {}: {} against {}", r[0], rows[k][j], r[c]),
                );
            }
        }
    }
    worst
}

#[test]
fn a_root_finding_importer_sees_every_event_from_rest_and_on_smooth_inputs() {
    let mut failures = vec![];
    for fmu in Fmu::all() {
        let model = fmu.md.model_name.clone();
        let fmu3 = Fmu3::load(&model);
        let names = real_outputs(&fmu);
        let ramps = RAMPS
            .iter()
            .filter(|r| r.model == model)
            .map(Ramps::scenario);
        let smooth = scenarios(&model).into_iter().filter(Scenario::smooth);
        for sc in ramps.chain(smooth) {
            let at = format!("{model} {}", sc.dir.display());
            let cs = co_simulation(&fmu, &sc, &names);
            let me = model_exchange(&fmu, &sc, &names, false);
            let near = model_exchange(&fmu, &sc, &names, true);
            let me3 = model_exchange3(&fmu3, &fmu, &sc, &names);
            let bits = |rows: &[Vec<f64>]| -> Vec<u64> {
                rows.iter().flatten().map(|x| x.to_bits()).collect()
            };
            if bits(&me.rows) != bits(&me3.rows) || me.events != me3.events || me.zeros != me3.zeros
            {
                failures.push(format!(
                    "{at}: the FMI 3.0 run differs from the FMI 2.0 run"
                ));
            }
            let (dev, what) = deviation(&names, &cs.rows, &me.rows);
            eprintln!(
                "{at}: {} events (CS {}), largest deviation {dev:.1e} ({what})",
                me.events.len(),
                cs.events.len()
            );
            if dev.is_nan() || dev >= 1e-6 {
                failures.push(format!("{at}: deviation {dev:.1e}: {what}"));
            }
            if let Some(reference) = sc.interpolated_reference(&model) {
                let (dev, what) = against_reference(&names, sc.step, &me.rows, &reference);
                eprintln!("{at}: deviation from the independent reference {dev:.1e} ({what})");
                if dev.is_nan() || dev >= 1e-6 {
                    failures.push(format!("{at}: {dev:.1e} from the reference: {what}"));
                }
            }
            failures.extend(me.zeros.iter().map(|z| format!("{at}: {z}")));
            // Roots on the near side: no event repeats, the same results and events.
            if let Some(t) = near.repeats.first() {
                let n = near.repeats.len();
                failures.push(format!(
                    "{at}: near-side roots: {n} event iterations changed nothing, the first at t = {t}: the root is found again"
                ));
            } else {
                let (dev, what) = deviation(&names, &me.rows, &near.rows);
                eprintln!(
                    "{at}: near-side roots: {} events, deviation {dev:.1e}",
                    near.events.len()
                );
                if dev.is_nan() || dev >= 1e-6 {
                    failures.push(format!(
                        "{at}: near-side roots: deviation {dev:.1e}: {what}"
                    ));
                }
                let same = near.events.len() == me.events.len()
                    && near
                        .events
                        .iter()
                        .zip(&me.events)
                        .all(|(a, b)| (a - b).abs() < 1e-7);
                if !same {
                    failures.push(format!(
                        "{at}: near-side roots: events {:?}, far side {:?}",
                        near.events, me.events
                    ));
                }
            }
            failures.extend(
                me.repeats
                    .iter()
                    .map(|t| format!("{at}: far-side root at t = {t} changed nothing")),
            );
            // Co-Simulation also reports the event iteration at t = 0.
            let cs_events: Vec<f64> = cs.events.into_iter().filter(|t| *t > 0.0).collect();
            let me_events: Vec<f64> = me.events.into_iter().filter(|t| *t > 0.0).collect();
            let same = cs_events.len() == me_events.len()
                && cs_events
                    .iter()
                    .zip(&me_events)
                    .all(|(a, b)| (a - b).abs() < 1e-7);
            if !same {
                failures.push(format!("{at}: events CS {cs_events:?}, ME {me_events:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
