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

// The importer and the inputs it is run with are in their own files; the runs are compared here.
#[path = "root_finding/importer.rs"]
mod importer;
#[path = "root_finding/ramps.rs"]
mod ramps;

use importer::{model_exchange, model_exchange3};
use ramps::{Ramps, RAMPS};

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
