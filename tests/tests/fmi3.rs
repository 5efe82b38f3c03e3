//! The FMI 3.0 FMUs through their C ABI, against the FMI 2.0 FMUs of the same models:
//! - Co-Simulation without Event Mode is the FMI 2.0 step, bit for bit, on every reference
//!   scenario;
//! - with Event Mode and early return, every event ends the step there, the importer's event
//!   iteration handles it, and the trajectory and the event times are those of the step that
//!   handles its events itself (within the validation's bound and the event location);
//! - the intermediate update callback is called at internal steps with FMI 3.0's flags, an
//!   early return ends the step where it was asked for, and a call from inside the callback is
//!   refused;
//! - every Real variable (parameters, calculated parameters, inputs, outputs, locals) is finite
//!   in both versions from Initialization Mode on, after every step of every reference
//!   scenario, and every start value of both modelDescription.xml files is finite;
//! - Model Exchange evaluates what FMI 2.0 Model Exchange does, bit for bit;
//! - the rest of the API: tokens, interfaces, states, dependencies, the extra variables.

use fmu_harness::fmi3::{Fmu3, Instance3, Kind};
use fmu_harness::scenario::{scenarios, Scenario};
use fmu_harness::{models_under_test, narrowed, Fmu, Instance, LogLine, ERROR, OK};
use model_description::{Causality, VariableType};

// What the tests read and how they run the scenarios are in tests/tests/fmi3/; the tests are here.
#[path = "fmi3/runs.rs"]
mod runs;
#[path = "fmi3/variables.rs"]
mod variables;

use runs::{grid, run2, run2_on, run_event_mode, start3};
use variables::{assert_finite, is_integer, outputs, reals, start_values};

fn models() -> Vec<String> {
    models_under_test()
}

#[test]
fn every_start_value_of_both_descriptions_is_finite() {
    // The scan finds a NaN where one is written.
    let nan = start_values(r#"<ScalarVariable name="x"><Real start="NaN"/>"#);
    assert_eq!(nan, [("x".to_string(), "NaN".to_string())]);
    for model in models() {
        let (fmu2, fmu3) = (Fmu::load(&model), Fmu3::load(&model));
        let xml2 = std::fs::read_to_string(fmu2.unpacked().join("modelDescription.xml")).unwrap();
        for (version, xml) in [("FMI 2.0", xml2.as_str()), ("FMI 3.0", fmu3.xml.as_str())] {
            let starts = start_values(xml);
            assert!(
                starts.len() > 3,
                "{model} {version}: start values not found"
            );
            for (name, x) in starts {
                let finite = x.parse::<f64>().is_ok_and(f64::is_finite);
                assert!(finite, "{model} {version}: {name} has start=\"{x}\"");
            }
        }
    }
}

#[test]
fn without_event_mode_every_scenario_is_bit_identical_to_fmi2() {
    for model in models() {
        let (fmu2, fmu3) = (Fmu::load(&model), Fmu3::load(&model));
        let vrs = reals(&fmu2);
        for sc in scenarios(&model) {
            let (expected, _) = run2(&fmu2, &sc, &vrs);
            for early_return in [false, true] {
                // Early return allowed but never asked for, without Event Mode: the same step.
                let kind = Kind::CoSimulation {
                    event_mode: false,
                    early_return,
                };
                let inst = start3(&fmu3, &fmu2, &sc, kind);
                let g = grid(&sc);
                for (k, w) in g.windows(2).enumerate() {
                    sc.set_inputs(&inst, w[0]);
                    let step = inst.do_step(w[0], w[1] - w[0]);
                    assert_eq!(step.status, OK, "{}", inst.log_text());
                    assert!(!step.early_return && !step.event_handling_needed);
                    assert_eq!(step.last_successful_time, w[1]);
                    let (s, got) = inst.get(&vrs);
                    assert_eq!(s, OK);
                    for (i, (a, b)) in got.iter().zip(&expected[k]).enumerate() {
                        assert_eq!(
                            a.to_bits(),
                            b.to_bits(),
                            "{model} {} at t = {}: {} is {a} in FMI 3.0, {b} in FMI 2.0",
                            sc.dir.display(),
                            w[1],
                            fmu2.md.model_variables[vrs[i] as usize].name
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn event_mode_keeps_the_trajectory_and_the_event_times() {
    let mut stopped = 0;
    for model in models() {
        let (fmu2, fmu3) = (Fmu::load(&model), Fmu3::load(&model));
        let vrs = outputs(&fmu2);
        for sc in scenarios(&model) {
            let (expected, events2) = run2(&fmu2, &sc, &vrs);
            let (got, events3, returns) = run_event_mode(&fmu3, &fmu2, &sc, &vrs);
            stopped += returns;
            assert_eq!(
                events2.len(),
                events3.len(),
                "{model} {}: events {events2:?} without, {events3:?} with Event Mode",
                sc.dir.display()
            );
            for (a, b) in events2.iter().zip(&events3) {
                assert!(
                    (a - b).abs() <= 1e-6 * (1.0 + a.abs()),
                    "{model}: event at {a} without, {b} with Event Mode"
                );
            }
            for (i, vr) in vrs.iter().enumerate() {
                let range = expected.iter().map(|r| r[i].abs()).fold(0.0, f64::max);
                let dev = expected
                    .iter()
                    .zip(&got)
                    .map(|(a, b)| (a[i] - b[i]).abs())
                    .fold(0.0, f64::max);
                assert!(
                    dev <= 1e-6 * range + 1e-9,
                    "{model} {}: {} deviates by {dev:e} (range {range:e})",
                    sc.dir.display(),
                    fmu2.md.model_variables[*vr as usize].name
                );
            }
        }
    }
    // The scenarios of all models together hold events (some models' hold none).
    assert!(
        stopped > 10 || narrowed(),
        "the scenarios hold events: {stopped} early returns"
    );
}

/// The CrankSlider's default scenario with communication steps of 50 ms (several internal steps
/// each), run with a callback: it is called at the internal steps inside each communication
/// step with FMI 3.0's flags; an early return asked at one of them ends the step there, and
/// one asked for a later time ends it at that time; the trajectory then goes on as without
/// the early returns.
#[test]
fn intermediate_updates_and_early_return() {
    let model = "CrankSlider";
    let (fmu2, fmu3) = (Fmu::load(model), Fmu3::load(model));
    let sc = scenarios(model).remove(0);
    let vrs = outputs(&fmu2);
    let g: Vec<f64> = (0..=(sc.stop / 0.05).round() as usize)
        .map(|k| k as f64 * 0.05)
        .collect();
    let (expected, _) = run2_on(&fmu2, &sc, &vrs, &g);
    let inst = start3(
        &fmu3,
        &fmu2,
        &sc,
        Kind::CoSimulation {
            event_mode: false,
            early_return: true,
        },
    );
    // A call made from inside the callback is refused, and the step goes on.
    *inst.env.reenter.lock().unwrap() = Some((fmu3.api.get_float64, inst.c));
    let (mut early, mut at_time) = (0, 0);
    for (k, w) in g.windows(2).enumerate() {
        sc.set_inputs(&inst, w[0]);
        let before = inst.env.updates.lock().unwrap().len();
        // Every 4th step: an early return at its second internal step; every 4th + 2: one
        // asked at its first internal step for the middle of the step.
        let middle = 0.5 * (w[0] + w[1]);
        if k % 4 == 0 {
            *inst.env.early_at.lock().unwrap() = Some((before + 1, None));
        } else if k % 4 == 2 {
            *inst.env.early_at.lock().unwrap() = Some((before, Some(middle)));
        }
        let mut t = w[0];
        loop {
            let step = inst.do_step(t, w[1] - t);
            assert_eq!(step.status, OK, "{}", inst.log_text());
            assert!(!step.event_handling_needed);
            let updates = inst.env.updates.lock().unwrap().clone();
            let new = &updates[before..];
            for u in new {
                assert!(
                    u.time > w[0] && u.time <= w[1],
                    "{u:?} outside the step {w:?}"
                );
                assert!(u.step_finished && u.can_return_early);
                assert!(!u.set_requested && !u.get_allowed);
            }
            assert!(
                new.windows(2).all(|p| p[1].time > p[0].time),
                "intermediate times increase"
            );
            if step.early_return {
                let asked = inst.env.early_at.lock().unwrap().take().unwrap();
                let expected_time = asked.1.unwrap_or(updates[asked.0].time);
                let expected_time = if expected_time > updates[asked.0].time {
                    expected_time
                } else {
                    updates[asked.0].time
                };
                assert_eq!(step.last_successful_time, expected_time, "{step:?}");
                assert_eq!(inst.time(), expected_time);
                if asked.1.is_some() && expected_time == middle {
                    at_time += 1;
                }
                early += 1;
                t = step.last_successful_time;
                continue;
            }
            assert_eq!(step.last_successful_time, w[1]);
            break;
        }
        let (s, v) = inst.get(&vrs);
        assert_eq!(s, OK);
        for (i, vr) in vrs.iter().enumerate() {
            let range = expected.iter().map(|r| r[i].abs()).fold(0.0, f64::max);
            assert!(
                (v[i] - expected[k][i]).abs() <= 1e-6 * range + 1e-9,
                "{}: {} after early returns, {} without",
                fmu2.md.model_variables[*vr as usize].name,
                v[i],
                expected[k][i]
            );
        }
    }
    let reentered = inst.env.reentered.lock().unwrap().clone();
    assert!(!reentered.is_empty() && reentered.iter().all(|s| *s == ERROR));
    assert!(
        early >= 8 && at_time >= 4,
        "{early} early returns, {at_time} at a time"
    );
}

/// Model Exchange: at the same times, states and inputs, FMI 3.0 evaluates what FMI 2.0 does.
#[test]
fn model_exchange_evaluates_as_fmi2() {
    for model in models() {
        let (fmu2, fmu3) = (Fmu::load(&model), Fmu3::load(&model));
        let (me2, me3) = (fmu2.instantiate_me("me2"), fmu3.model_exchange());
        assert_eq!(me2.setup_experiment(None, 0.0, None), OK);
        assert_eq!(me2.enter_initialization_mode(), OK);
        assert_eq!(me2.exit_initialization_mode(), OK);
        assert_eq!(me3.enter_initialization_mode(None, 0.0, 10.0), OK);
        assert_eq!(me3.exit_initialization_mode(), OK, "{}", me3.log_text());
        assert_eq!(me2.event_iteration().0, OK);
        assert_eq!(me3.event_iteration(), OK);
        assert_eq!(me2.enter_continuous_time_mode(), OK);
        assert_eq!(me3.enter_continuous_time_mode(), OK);
        let (s, x0) = me3.continuous_states();
        assert_eq!(s, OK);
        assert_eq!(x0, me2.continuous_states().1);
        for k in 1..20 {
            let t = 0.01 * k as f64;
            let x: Vec<f64> = x0
                .iter()
                .enumerate()
                .map(|(i, x)| x + 1e-3 * (k * (i + 1)) as f64 * (1.0 + x.abs()))
                .collect();
            assert_eq!((me2.set_time(t), me2.set_continuous_states(&x)), (OK, OK));
            assert_eq!((me3.set_time(t), me3.set_continuous_states(&x)), (OK, OK));
            let (d2, d3) = (me2.derivatives(), me3.derivatives());
            let (z2, z3) = (me2.event_indicators(), me3.event_indicators());
            assert_eq!(d2.0, d3.0, "{model}");
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&d2.1), bits(&d3.1), "{model} derivatives at t = {t}");
            assert_eq!(
                bits(&z2.1),
                bits(&z3.1),
                "{model} event indicators at t = {t}"
            );
            // The indicators are also variables, after the model's own and `time`.
            let n = fmu2.md.model_variables.len() as u32;
            let extra: Vec<u32> = (0..z3.1.len() as u32).map(|i| n + 1 + i).collect();
            let (s, by_vr) = me3.get(&extra);
            assert_eq!(s, z3.0);
            assert_eq!(bits(&by_vr), bits(&z3.1), "{model}");
            assert_eq!(me3.get(&[n]).1, vec![t]);
        }
    }
}

#[test]
fn the_rest_of_the_api() {
    let fmu2 = Fmu::load("CrankSlider");
    let fmu3 = Fmu3::load("CrankSlider");
    // The FMI 3.0 description keeps the value references and names the extra variables.
    let n = fmu2.md.model_variables.len();
    assert!(fmu3.xml.contains(&format!(
        r#"name="time" valueReference="{n}" description="Simulation time" causality="independent""#
    )));
    for v in &fmu2.md.model_variables {
        assert!(
            fmu3.xml.contains(&format!(
                r#"name="{}" valueReference="{}""#,
                v.name, v.value_reference
            )),
            "{}",
            v.name
        );
    }
    // A wrong token, Scheduled Execution: NULL and the reason.
    let log = fmu3
        .instantiate_with(
            Kind::CoSimulation {
                event_mode: false,
                early_return: false,
            },
            "{wrong}",
        )
        .err()
        .unwrap();
    assert!(
        log.contains("instantiationToken {wrong} does not match"),
        "{log}"
    );
    // Interfaces and modes.
    let me = fmu3.model_exchange();
    let step = me.do_step(0.0, 0.1);
    assert_eq!(step.status, ERROR);
    assert!(me
        .log_text()
        .contains("fmi3DoStep is a Co-Simulation function"));
    let cs = fmu3.co_simulation(false, false);
    assert_eq!(cs.enter_initialization_mode(Some(1e-8), 0.0, 1.0), OK);
    assert_eq!(cs.exit_initialization_mode(), OK);
    assert_eq!(cs.enter_event_mode(), ERROR);
    assert!(
        cs.log_text().contains("eventModeUsed = false"),
        "{}",
        cs.log_text()
    );
    assert_eq!(cs.set_time(0.5), ERROR);
    // Time and event indicators are read-only.
    assert_eq!(cs.set_vr(n as u32, 1.0), ERROR);
    assert!(cs.log_text().contains("independent variable"));
    // FMU states: bit-identical rollback; an FMI 2.0 state is refused by name.
    assert_eq!(cs.do_step(0.0, 0.1).status, OK);
    let (s, saved) = cs.get_state();
    assert_eq!(s, OK);
    let vrs = reals(&fmu2);
    assert_eq!(cs.do_step(0.1, 0.1).status, OK);
    let first = cs.get(&vrs).1;
    assert_eq!(cs.set_state(&saved), OK);
    assert_eq!(cs.time(), 0.1);
    let bytes = cs.serialize(&saved).unwrap();
    let (s, copy) = cs.deserialize(&bytes);
    assert_eq!(s, OK);
    assert_eq!(cs.set_state(&copy), OK);
    assert_eq!(cs.do_step(0.1, 0.1).status, OK);
    let again = cs.get(&vrs).1;
    assert_eq!(
        first.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        again.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    assert_eq!(cs.free_state(saved), OK);
    assert_eq!(cs.free_state(copy), OK);
    let cs2 = fmu2.instantiate("fmi2");
    cs2.initialize(0.0, Some(1.0), &[]);
    let (_, s2) = cs2.get_state();
    let bytes2 = cs2.serialize(&s2).unwrap();
    assert_eq!(cs2.free_state(s2), OK);
    let (s, _) = cs.deserialize(&bytes2);
    assert_eq!(s, ERROR);
    assert!(cs.log_text().contains("FMI 3.0"), "{}", cs.log_text());
    // Variable dependencies as ModelStructure declares them: before initialization those of
    // the InitialUnknowns, afterwards those of the Outputs and ContinuousStateDerivatives.
    let ms = &fmu2.md.model_structure;
    let fresh = fmu3.co_simulation(false, false);
    for u in &ms.initial_unknowns {
        let mut count = usize::MAX;
        let s = unsafe {
            (fmu3.api.get_number_of_variable_dependencies)(fresh.c, u.index as u32 - 1, &mut count)
        };
        assert_eq!(s, OK, "{}", fresh.log_text());
        // No list: every parameter and input.
        let all = fmu2
            .md
            .model_variables
            .iter()
            .filter(|v| matches!(v.causality, Causality::Parameter | Causality::Input))
            .count();
        let declared = u.dependencies.as_ref().map_or(all, Vec::len);
        assert_eq!(
            count,
            declared,
            "{}",
            fmu2.md.model_variables[u.index - 1].name
        );
    }
    for u in ms.outputs.iter().chain(&ms.derivatives) {
        let vr = u.index as u32 - 1;
        let mut count = usize::MAX;
        let s = unsafe { (fmu3.api.get_number_of_variable_dependencies)(cs.c, vr, &mut count) };
        assert_eq!(s, OK);
        let declared: Vec<u32> = u
            .dependencies
            .as_ref()
            .unwrap()
            .iter()
            .map(|i| *i as u32 - 1)
            .collect();
        assert_eq!(count, declared.len());
        let (mut a, mut b, mut c, mut d) = (
            vec![9usize; count],
            vec![0u32; count],
            vec![9usize; count],
            vec![0; count],
        );
        let s = unsafe {
            (fmu3.api.get_variable_dependencies)(
                cs.c,
                vr,
                a.as_mut_ptr(),
                b.as_mut_ptr(),
                c.as_mut_ptr(),
                d.as_mut_ptr(),
                count,
            )
        };
        assert_eq!(s, OK);
        assert_eq!(b, declared);
        assert!(a.iter().chain(&c).all(|i| *i == 0) && d.iter().all(|k| *k == 5));
    }
}
