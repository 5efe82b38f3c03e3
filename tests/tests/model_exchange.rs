//! Model Exchange through the C ABI: every FMU run by the tests' small ME importer
//! (`fmu_harness::importer`: an adaptive Dormand-Prince 5(4) over the FMU's states, event
//! indicators watched at every step, crossings located by bisection, the FMU's event iteration
//! at each) on every reference scenario in `reference-fmus/`, against the same FMU's
//! Co-Simulation run: the same outputs, the same events at the same times. Also the ME
//! structure (state order, derivatives), the ME state machine, and refused calls.

use fmu_harness::importer::{
    co_simulation, largest_deviation, outputs, real_outputs, DormandPrince, Run,
};
use fmu_harness::scenario::{scenarios, Scenario};
use fmu_harness::{Fmu, Instance, ERROR, OK};
use model_description::VariableType;
use std::path::PathBuf;

/// The tolerance of the importer's Dormand-Prince 5(4).
const RTOL: f64 = 1e-11;

fn model_exchange(fmu: &Fmu, sc: &Scenario, names: &[String]) -> Run {
    fmu_harness::importer::model_exchange(fmu, sc, names, DormandPrince { rtol: RTOL }).0
}

/// Every FMU, every reference scenario: the Model Exchange run of our importer gives the
/// Co-Simulation run's outputs (within 1e-6 of each signal's largest magnitude) and its events.
#[test]
fn model_exchange_runs_every_scenario_as_co_simulation_does() {
    for fmu in Fmu::all() {
        let names = real_outputs(&fmu);
        for sc in scenarios(&fmu.md.model_name) {
            let where_ = format!("{} {}", fmu.md.model_name, sc.dir.display());
            let cs = co_simulation(&fmu, &sc, &names);
            let me = model_exchange(&fmu, &sc, &names);
            let (cs_events, me_events) = (&cs.events, &me.events);
            let worst = largest_deviation(&names, &cs, &me, sc.step);
            eprintln!(
                "{where_}: {} events in both, largest deviation {:.1e} ({})",
                me_events.len(),
                worst.0,
                worst.1
            );
            assert!(worst.0 < 1e-6, "{where_}: {}", worst.1);
            assert_eq!(
                cs_events.len(),
                me_events.len(),
                "{where_}: {cs_events:?} vs {me_events:?}"
            );
            for (a, b) in cs_events.iter().zip(me_events) {
                assert!(
                    (a - b).abs() < 1e-7,
                    "{where_}: event at {a} (CS) vs {b} (ME)"
                );
            }
        }
    }
}

/// A Model Exchange instance of the scenario, initialized with its inputs at t = 0, in
/// Continuous-Time Mode.
fn continuous_time_mode<'a>(fmu: &'a Fmu, sc: &Scenario, name: &str) -> Instance<'a> {
    let inst = fmu.instantiate_me(name);
    assert_eq!(inst.setup_experiment(None, 0.0, None), OK);
    sc.set_parameters(&inst);
    assert_eq!(inst.enter_initialization_mode(), OK);
    sc.set_inputs(&inst, 0.0);
    assert_eq!(inst.exit_initialization_mode(), OK, "{}", inst.log_text());
    assert_eq!(inst.event_iteration().0, OK);
    assert_eq!(inst.enter_continuous_time_mode(), OK);
    inst
}

/// The continuous states are the variables the ModelStructure's Derivatives point at, in that
/// order, and fmi2GetDerivatives gives the derivative variables' values.
#[test]
fn states_and_derivatives_follow_the_model_structure() {
    for fmu in Fmu::all() {
        let name = &fmu.md.model_name;
        let sc = scenarios(name).remove(0);
        let inst = continuous_time_mode(&fmu, &sc, "structure");
        let vars = &fmu.md.model_variables;
        let derivatives: Vec<&str> = fmu
            .md
            .model_structure
            .derivatives
            .iter()
            .map(|u| vars[u.index - 1].name.as_str())
            .collect();
        let states: Vec<&str> = fmu
            .md
            .model_structure
            .derivatives
            .iter()
            .map(|u| match vars[u.index - 1].kind {
                VariableType::Real {
                    derivative: Some(s),
                    ..
                } => vars[s - 1].name.as_str(),
                _ => panic!("{name}: a derivative without its state"),
            })
            .collect();
        assert_eq!(
            fmu.md
                .model_exchange
                .as_ref()
                .map(|m| m.model_identifier.as_str()),
            Some(name.as_str())
        );
        // Move the states off their start so that a wrong order shows.
        let (_, x0) = inst.continuous_states();
        let x: Vec<f64> = x0
            .iter()
            .enumerate()
            .map(|(i, v)| v + 1e-4 * (i + 1) as f64)
            .collect();
        assert_eq!(inst.set_time(0.001), OK);
        assert_eq!(inst.set_continuous_states(&x), OK);
        let (s, dx) = inst.derivatives();
        assert_eq!(s, OK);
        for (i, (state, derivative)) in states.iter().zip(&derivatives).enumerate() {
            assert_eq!(inst.real(state), x[i], "{name}: state {i} is not {state}");
            let d = inst.real(derivative);
            assert!(
                (d - dx[i]).abs() <= 1e-12 * d.abs().max(1.0),
                "{name}: derivative {i} ({derivative}) {d} vs fmi2GetDerivatives {}",
                dx[i]
            );
        }
        let (s, z) = inst.event_indicators();
        assert_eq!((s, z.len()), (OK, fmu.md.number_of_event_indicators));
        eprintln!("{name}: states {states:?}, {} event indicators", z.len());
        // The same states set by value reference (fmi2SetReal, allowed on continuous-time
        // states in Continuous-Time Mode since FMI 2.0.1): the same derivatives, bit for bit.
        let by_reference = continuous_time_mode(&fmu, &sc, "by reference");
        let vrs: Vec<u32> = states.iter().map(|s| fmu.vr(s)).collect();
        assert_eq!(by_reference.set_time(0.001), OK);
        assert_eq!(
            by_reference.set_real(&vrs, &x),
            OK,
            "{}",
            by_reference.log_text()
        );
        let (s, dx_by_reference) = by_reference.derivatives();
        assert_eq!(s, OK);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&dx_by_reference),
            bits(&dx),
            "{name}: states set by value reference"
        );
    }
}

/// The ME state machine: calls of the other interface, calls in the wrong mode, wrong array
/// lengths and non-finite values are refused with a reason, and change nothing.
#[test]
fn model_exchange_calls_out_of_place_are_refused() {
    for fmu in Fmu::all() {
        let name = &fmu.md.model_name;
        let n = fmu.states();
        let inst = fmu.instantiate_me("calls");
        // Before initialization: no states to set, no time, no event mode.
        assert_eq!(inst.set_continuous_states(&vec![0.0; n]), ERROR);
        assert_eq!(inst.set_time(0.0), ERROR);
        assert_eq!(inst.enter_event_mode(), ERROR);
        assert_eq!(inst.do_step(0.0, 1e-3), ERROR);
        assert!(
            inst.log_text().contains("Co-Simulation"),
            "{name}: {}",
            inst.log_text()
        );
        assert_eq!(inst.setup_experiment(None, 0.0, None), OK);
        assert_eq!(inst.enter_initialization_mode(), OK);
        assert_eq!(inst.exit_initialization_mode(), OK);
        // Event Mode: states cannot be set, the step is not complete.
        assert_eq!(inst.set_continuous_states(&vec![0.0; n]), ERROR);
        assert_eq!(inst.completed_integrator_step().0, ERROR);
        assert_eq!(inst.event_iteration().0, OK);
        assert_eq!(inst.enter_continuous_time_mode(), OK);
        assert_eq!(inst.new_discrete_states().0, ERROR);
        let (_, x) = inst.continuous_states();
        let mut bad = x.clone();
        bad[0] = f64::NAN;
        inst.clear_log();
        assert_eq!(inst.set_continuous_states(&bad), ERROR);
        assert!(
            inst.log_text().contains("NaN"),
            "{name}: {}",
            inst.log_text()
        );
        assert_eq!(inst.continuous_states().1, x);
        assert_eq!(inst.set_continuous_states(&x[1..]), ERROR);
        assert_eq!(inst.set_time(f64::INFINITY), ERROR);
        let mut short = vec![0.0; n.saturating_sub(1)];
        let s = unsafe { (fmu.api.get_derivatives)(inst.c, short.as_mut_ptr(), short.len()) };
        assert_eq!(s, ERROR);
        // A Co-Simulation state is no Model Exchange state.
        let cs = fmu.instantiate("cs");
        cs.initialize(0.0, None, &[]);
        let (_, state) = cs.get_state();
        assert_eq!(inst.set_state(&state), ERROR, "{name}");
        assert!(
            inst.log_text().contains("Co-Simulation"),
            "{name}: {}",
            inst.log_text()
        );
        cs.free_state(state);
        assert_eq!(inst.terminate(), OK);
    }
}

/// Get/set and serialized FMU state in Model Exchange: a rollback repeats the derivatives and
/// outputs bit for bit.
#[test]
fn model_exchange_states_roll_back_bit_for_bit() {
    for fmu in Fmu::all() {
        let name = &fmu.md.model_name;
        let sc = scenarios(name).remove(0);
        let names = real_outputs(&fmu);
        let inst = continuous_time_mode(&fmu, &sc, "rollback");
        let (_, x) = inst.continuous_states();
        let (_, state) = inst.get_state();
        let bytes = inst.serialize(&state).expect("serialize");
        let look = |inst: &Instance| {
            let mut v = inst.derivatives().1;
            v.extend(outputs(inst, &names));
            v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>()
        };
        let first = look(&inst);
        let moved: Vec<f64> = x.iter().map(|v| v + 0.5).collect();
        sc.set_inputs(&inst, sc.stop / 2.0);
        assert_eq!(inst.set_time(0.3), OK);
        assert_eq!(inst.set_continuous_states(&moved), OK);
        assert_eq!(inst.set_state(&state), OK);
        assert_eq!(look(&inst), first, "{name}: rollback");
        let other = fmu.instantiate_me("deserialized");
        let (s, back) = other.deserialize(&bytes);
        assert_eq!(s, OK);
        assert_eq!(other.set_state(&back), OK);
        assert_eq!(look(&other), first, "{name}: deserialized");
        inst.free_state(state);
        other.free_state(back);
    }
}

/// The CVT's sheave pushed onto its upper stop, held, released when the force reverses and
/// thrown onto the lower stop (`tests/tests/cvt.rs`): the inelastic stops reset the sheave's
/// speed (valuesOfContinuousStatesChanged), and the ME run has the Co-Simulation run's events
/// and outputs.
#[test]
fn cvt_sheave_stops_are_the_same_events_in_model_exchange() {
    let fmu = Fmu::load("CVT");
    let probe = fmu.instantiate("probe");
    probe.initialize(0.0, None, &[]);
    let f_bal = -40.0 * probe.real("ds1_ds2");
    let row = |t: f64, f2: f64| vec![t, 0.0, 0.0, 40.0, f2];
    let sc = Scenario {
        dir: PathBuf::from("(CVT stops)"),
        names: ["tau_1", "tau_2", "F_1", "F_2"].map(String::from).to_vec(),
        integers: vec![false; 4],
        rows: vec![
            row(0.0, f_bal + 10.0),
            row(0.3, f_bal + 10.0),
            row(0.3, f_bal - 10.0),
            row(0.6, f_bal - 10.0),
        ],
        params: vec![],
        stop: 0.6,
        step: 1e-3,
        tol: 1e-8,
    };
    let names = real_outputs(&fmu);
    let Run {
        rows: cs,
        events: cs_events,
    } = co_simulation(&fmu, &sc, &names);
    let Run {
        rows: me,
        events: me_events,
    } = model_exchange(&fmu, &sc, &names);
    assert_eq!(cs_events.len(), 3, "{cs_events:?}");
    assert_eq!(me_events.len(), 3, "{me_events:?}");
    for (a, b) in cs_events.iter().zip(&me_events) {
        assert!((a - b).abs() < 1e-7, "{cs_events:?} vs {me_events:?}");
    }
    let j = names.iter().position(|n| n == "energy_impact").unwrap();
    let (a, b) = (cs.last().unwrap()[j], me.last().unwrap()[j]);
    eprintln!("CVT stops: events {me_events:?}, energy_impact CS {a} ME {b}");
    assert!(a > 0.0 && (a - b).abs() < 1e-6 * a, "{a} vs {b}");
}

/// A trial state outside the model's domain (a CVT sheave 0.2 m beyond its 6 mm travel, where
/// no primary position fits the belt) is fmi2Discard for the derivatives and the outputs, as
/// FMI 2.0 asks, not fmi2Error: the importer takes a smaller step, and the instance goes on
/// exactly as before.
#[test]
fn states_outside_the_domain_are_discarded_not_errors() {
    use fmu_harness::DISCARD;
    let fmu = Fmu::load("CVT");
    let sc = scenarios("CVT").remove(0);
    let inst = continuous_time_mode(&fmu, &sc, "domain");
    let (_, x) = inst.continuous_states();
    let (_, dx) = inst.derivatives();
    let s2 = fmu.md.model_structure.derivatives.iter().position(|u| {
        matches!(fmu.md.model_variables[u.index - 1].kind, VariableType::Real { derivative: Some(s), .. } if fmu.md.model_variables[s - 1].name == "s2")
    });
    let mut bad = x.clone();
    bad[s2.expect("s2 is a state")] = 0.2;
    assert_eq!(inst.set_continuous_states(&bad), OK);
    assert_eq!(inst.derivatives().0, DISCARD, "{}", inst.log_text());
    let mut v = [0.0];
    let vr = fmu
        .md
        .model_variables
        .iter()
        .find(|v| v.name == "w2")
        .unwrap()
        .value_reference;
    assert_eq!(inst.get_real(&[vr], &mut v), DISCARD);
    assert!(
        inst.log_text().contains("outside the model's domain"),
        "{}",
        inst.log_text()
    );
    assert_eq!(inst.set_continuous_states(&x), OK);
    let (s, again) = inst.derivatives();
    assert_eq!(s, OK);
    assert_eq!(
        again.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        dx.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    assert_eq!(inst.get_real(&[vr], &mut v), OK);
}
