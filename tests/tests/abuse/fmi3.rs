//! The FMI 3.0 functions against the same careless importer: wrong tokens and features not
//! provided, calls out of order and on the wrong interface, NULL pointers and wrong lengths,
//! NaN and Inf in every input and parameter, corrupted states, random call sequences of every
//! kind of FMI 3.0 call, and eight threads. A refused call changes nothing: the instance's
//! serialized FMU state is the same before and after it.

use super::{passed, reals, serial, set_every_variable, Mode, MEMCHECK_SEEDS, SEEDS};
use fmu_harness::fmi3::{Fmu3, Instance3, Kind};
use fmu_harness::sequence::{fmi3_sequence, memcheck, Rng};
use fmu_harness::state_bytes::crafted;
use fmu_harness::{models_under_test, Fmu, ERROR, OK};
use model_description::Causality;
use std::ptr::{null, null_mut};

fn all() -> Vec<(Fmu, Fmu3)> {
    models_under_test()
        .iter()
        .map(|m| (Fmu::load(m), Fmu3::load(m)))
        .collect()
}

const CO_SIMULATION: Kind = Kind::CoSimulation {
    event_mode: true,
    early_return: true,
};

/// The instance's FMU state as bytes: everything a refused call must leave as it was.
fn snapshot(inst: &Instance3) -> Vec<u8> {
    let (s, st) = inst.get_state();
    assert_eq!(s, OK, "{}", inst.log_text());
    let bytes = inst.serialize(&st).unwrap();
    assert_eq!(inst.free_state(st), OK);
    bytes
}

fn started(fmu3: &Fmu3) -> Instance3<'_> {
    let inst = fmu3.instantiate(CO_SIMULATION).unwrap();
    assert_eq!(inst.enter_initialization_mode(None, 0.0, 10.0), OK);
    assert_eq!(inst.exit_initialization_mode(), OK, "{}", inst.log_text());
    assert_eq!(inst.event_iteration(), OK);
    assert_eq!(inst.enter_step_mode(), OK);
    inst
}

/// One communication step as an importer with Event Mode and early return takes it.
fn step(inst: &Instance3, t: f64, h: f64) {
    let mut at = t;
    loop {
        let step = inst.do_step(at, t + h - at);
        assert_eq!(step.status, OK, "{}", inst.log_text());
        at = step.last_successful_time;
        if step.event_handling_needed {
            assert_eq!(inst.enter_event_mode(), OK);
            assert_eq!(inst.event_iteration(), OK);
            assert_eq!(inst.enter_step_mode(), OK);
        }
        if !step.early_return {
            return;
        }
    }
}

#[test]
fn fmi3_refusals_change_nothing_and_the_instance_goes_on() {
    let _serial = serial();
    for (fmu2, fmu3) in all() {
        let name = fmu2.md.model_name.clone();
        let api = &fmu3.api;
        // Instantiation that must fail, with a reason.
        for kind in [Kind::ModelExchange, CO_SIMULATION] {
            let log = fmu3.instantiate_with(kind, "{wrong}").err().unwrap();
            assert!(log.contains("does not match"), "{name}: {log}");
        }
        let token = std::ffi::CString::new(fmu2.md.guid.clone()).unwrap();
        unsafe {
            let none = (api.instantiate_scheduled_execution)(
                c"x".as_ptr(),
                token.as_ptr(),
                null(),
                false,
                false,
                null_mut(),
                None,
                None,
                None,
                None,
            );
            assert!(none.is_null(), "{name}: Scheduled Execution");
            let required = [0u32];
            let none = (api.instantiate_co_simulation)(
                c"x".as_ptr(),
                token.as_ptr(),
                null(),
                false,
                false,
                true,
                true,
                required.as_ptr(),
                1,
                null_mut(),
                None,
                None,
            );
            assert!(none.is_null(), "{name}: required intermediate variables");
            let none = (api.instantiate_model_exchange)(
                null(),
                token.as_ptr(),
                null(),
                false,
                false,
                null_mut(),
                None,
            );
            assert!(none.is_null(), "{name}: NULL instance name");
            assert_eq!((api.reset)(null_mut()), ERROR);
            assert_eq!((api.enter_step_mode)(null_mut()), ERROR);
            (api.free_instance)(null_mut());
        }
        // Out of order, and on the wrong interface.
        let inst = fmu3.instantiate(CO_SIMULATION).unwrap();
        assert_eq!(inst.do_step(0.0, 0.1).status, ERROR, "{name}");
        assert_eq!(inst.exit_initialization_mode(), ERROR);
        assert_eq!(inst.enter_step_mode(), ERROR);
        assert_eq!(inst.update_discrete_states().0, ERROR);
        assert_eq!(inst.set_time(0.0), ERROR);
        assert_eq!(inst.enter_continuous_time_mode(), ERROR);
        drop(inst);
        let me = fmu3.model_exchange();
        assert_eq!(me.do_step(0.0, 0.1).status, ERROR);
        assert_eq!(me.enter_step_mode(), ERROR);
        drop(me);

        let inst = started(&fmu3);
        let before = snapshot(&inst);
        let refused = |status: i32, what: &str| {
            assert_eq!(status, ERROR, "{name}: {what} should be refused");
            assert!(
                snapshot(&inst) == before,
                "{name}: {what} changed the instance"
            );
        };
        let c = inst.c;
        let vr0 = [0u32];
        let (out, inp) = (
            [reals(&fmu2, Causality::Output)[0].1],
            [reals(&fmu2, Causality::Input)[0].1],
        );
        let mut v = [0.0; 2];
        let (mut a, mut b, mut d, mut t) = (false, false, false, 0.0);
        let mut st = null_mut();
        let mut n = 0usize;
        unsafe {
            let calls = [
                (
                    (api.get_float64)(c, null(), 1, v.as_mut_ptr(), 1),
                    "GetFloat64 with NULL value references",
                ),
                (
                    (api.get_float64)(c, vr0.as_ptr(), 1, null_mut(), 1),
                    "GetFloat64 into NULL",
                ),
                (
                    (api.get_float64)(c, vr0.as_ptr(), 1, v.as_mut_ptr(), 2),
                    "GetFloat64 with nValues != nValueReferences",
                ),
                (
                    (api.set_float64)(c, null(), 1, v.as_ptr(), 1),
                    "SetFloat64 with NULL value references",
                ),
                (
                    (api.get_float64)(c, [u32::MAX].as_ptr(), 1, v.as_mut_ptr(), 1),
                    "GetFloat64 of an unknown value reference",
                ),
                (
                    (api.do_step)(c, 0.0, 0.1, true, null_mut(), &mut a, &mut b, &mut t),
                    "DoStep with a NULL eventHandlingNeeded",
                ),
                (
                    (api.do_step)(c, 0.0, 0.1, true, &mut a, &mut b, &mut d, null_mut()),
                    "DoStep with a NULL lastSuccessfulTime",
                ),
                (
                    (api.do_step)(c, 0.5, 0.1, true, &mut a, &mut b, &mut d, &mut t),
                    "DoStep at a wrong communication point",
                ),
                (
                    (api.do_step)(c, 0.0, -0.1, true, &mut a, &mut b, &mut d, &mut t),
                    "DoStep with a negative step",
                ),
                (
                    (api.do_step)(c, 0.0, f64::NAN, true, &mut a, &mut b, &mut d, &mut t),
                    "DoStep with a NaN step",
                ),
                ((api.get_fmu_state)(c, null_mut()), "GetFMUState into NULL"),
                ((api.set_fmu_state)(c, null_mut()), "SetFMUState of NULL"),
                (
                    (api.deserialize_fmu_state)(c, null(), 100, &mut st),
                    "DeserializeFMUState of NULL",
                ),
                (
                    (api.get_directional_derivative)(
                        c,
                        vr0.as_ptr(),
                        1,
                        [1u32].as_ptr(),
                        1,
                        [1.0].as_ptr(),
                        1,
                        v.as_mut_ptr(),
                        1,
                    ),
                    "GetDirectionalDerivative",
                ),
                (
                    (api.get_directional_derivative)(
                        c,
                        out.as_ptr(),
                        1,
                        inp.as_ptr(),
                        1,
                        null(),
                        1,
                        v.as_mut_ptr(),
                        1,
                    ),
                    "GetDirectionalDerivative with a NULL seed",
                ),
                (
                    (api.get_directional_derivative)(
                        c,
                        out.as_ptr(),
                        1,
                        inp.as_ptr(),
                        1,
                        [1.0].as_ptr(),
                        1,
                        null_mut(),
                        1,
                    ),
                    "GetDirectionalDerivative into NULL",
                ),
                (
                    (api.get_directional_derivative)(
                        c,
                        out.as_ptr(),
                        1,
                        inp.as_ptr(),
                        1,
                        [1.0; 2].as_ptr(),
                        2,
                        v.as_mut_ptr(),
                        1,
                    ),
                    "GetDirectionalDerivative with nSeed != nKnowns",
                ),
                (
                    (api.get_adjoint_derivative)(
                        c,
                        null(),
                        1,
                        inp.as_ptr(),
                        1,
                        [1.0].as_ptr(),
                        1,
                        v.as_mut_ptr(),
                        1,
                    ),
                    "GetAdjointDerivative with NULL unknowns",
                ),
                (
                    (api.get_adjoint_derivative)(
                        c,
                        out.as_ptr(),
                        1,
                        inp.as_ptr(),
                        1,
                        [1.0].as_ptr(),
                        1,
                        v.as_mut_ptr(),
                        2,
                    ),
                    "GetAdjointDerivative with nSensitivity != nKnowns",
                ),
                (
                    (api.get_adjoint_derivative)(
                        c,
                        inp.as_ptr(),
                        1,
                        out.as_ptr(),
                        1,
                        [1.0].as_ptr(),
                        1,
                        v.as_mut_ptr(),
                        1,
                    ),
                    "GetAdjointDerivative of an input by an output",
                ),
                ((api.get_clock)(c, vr0.as_ptr(), 1, &mut a), "GetClock"),
                ((api.enter_configuration_mode)(c), "EnterConfigurationMode"),
                ((api.evaluate_discrete_states)(c), "EvaluateDiscreteStates"),
                (
                    (api.get_boolean)(c, vr0.as_ptr(), 1, &mut a, 1),
                    "GetBoolean",
                ),
                ((api.set_time)(c, 1.0), "SetTime on Co-Simulation"),
                (
                    (api.get_number_of_variable_dependencies)(c, u32::MAX, &mut n),
                    "GetNumberOfVariableDependencies of an unknown value reference",
                ),
            ];
            for (status, what) in calls {
                refused(status, what);
            }
        }
        // NaN and Inf in every input and parameter, and the read-only time.
        for (n, vr) in reals(&fmu2, Causality::Input)
            .into_iter()
            .chain(reals(&fmu2, Causality::Parameter))
        {
            for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                refused(inst.set_vr(vr, x), &format!("{n} = {x}"));
            }
        }
        // Out of the declared range.
        for v in &fmu2.md.model_variables {
            if let model_description::VariableType::Real { min, max, .. } = v.kind {
                let tunable = v.causality == Causality::Input;
                if let (true, Some(min)) = (tunable, min) {
                    refused(
                        inst.set_vr(v.value_reference, min - 1.0),
                        &format!("{} below its min", v.name),
                    );
                }
                if let (true, Some(max)) = (tunable, max) {
                    refused(
                        inst.set_vr(v.value_reference, max + 1.0),
                        &format!("{} above its max", v.name),
                    );
                }
            }
        }
        refused(
            inst.set_vr(fmu2.md.model_variables.len() as u32, 1.0),
            "setting time",
        );
        // Corrupted, truncated, crafted and garbage states.
        let mut corrupt = before.clone();
        corrupt[before.len() / 2] ^= 0x40;
        for (bytes, what) in [
            (corrupt, "a corrupted state"),
            (before[..before.len() / 2].to_vec(), "a truncated state"),
            (
                crafted(&before, &[(0, f64::NAN)]),
                "a crafted state (NaN for a parameter)",
            ),
            (vec![0xab; before.len()], "garbage"),
        ] {
            let (s, st) = inst.deserialize(&bytes);
            refused(s, what);
            assert!(st.0.is_null());
        }
        // After all of that the instance steps on, its outputs finite.
        for k in 0..20 {
            step(&inst, k as f64 * 1e-3, 1e-3);
        }
        let outputs: Vec<u32> = reals(&fmu2, Causality::Output)
            .into_iter()
            .map(|(_, vr)| vr)
            .collect();
        let (s, y) = inst.get(&outputs);
        assert_eq!(s, OK);
        assert!(y.iter().all(|y| y.is_finite()), "{name}: {y:?}");
    }
    passed(
        "fmi3_refusals_change_nothing_and_the_instance_goes_on",
        "FMI 3.0: wrong tokens, Scheduled Execution, required intermediate variables, NULL \
         instance and arrays, wrong lengths, calls out of order and on the wrong interface, \
         features not provided, NaN and Inf in every input and parameter, inputs out of their \
         range, corrupted, \
         truncated, crafted and garbage states: refused without a change, then the instance \
         steps on"
            .into(),
    );
}

const SEQUENCE3: usize = 200;

#[test]
fn fmi3_set_calls_follow_the_state_tables() {
    let _serial = serial();
    for (fmu, fmu3) in all() {
        let me = fmu3.model_exchange();
        assert_eq!(me.enter_initialization_mode(None, 0.0, 10.0), OK);
        assert_eq!(me.exit_initialization_mode(), OK, "{}", me.log_text());
        assert_eq!(me.event_iteration(), OK);
        assert_eq!(me.enter_continuous_time_mode(), OK);
        let value = |name: &str| me.get(&[fmu.vr(name)]).1[0];
        set_every_variable(&fmu, &me, Mode::ContinuousTime, &|| snapshot(&me), &value);
        assert_eq!(me.enter_event_mode(), OK);
        set_every_variable(&fmu, &me, Mode::Event, &|| snapshot(&me), &value);
        assert_eq!(me.event_iteration(), OK, "{}", me.log_text());
        let cs = started(&fmu3);
        set_every_variable(&fmu, &cs, Mode::Step, &|| snapshot(&cs), &|_| 0.0);
        step(&cs, 0.0, 0.1);
    }
    passed(
        "fmi3_set_calls_follow_the_state_tables",
        "every variable set in Continuous-Time Mode, Event Mode and Step Mode: only what FMI 3.0's state tables allow is written".into(),
    );
}

/// Seeds 1..=20 of the FMI 3.0 call sequences (`fmu_harness::sequence`), through every packaged
/// FMU, the first six under valgrind, as FMI 2.0's; the coverage-guided fuzzer (`fuzz/`) draws
/// further ones.
#[test]
fn fmi3_random_call_sequences_always_return_a_status() {
    let _serial = serial();
    let fmus = all();
    let seeds = if memcheck() { MEMCHECK_SEEDS } else { SEEDS };
    for seed in 1..=seeds {
        for (_, fmu3) in &fmus {
            fmi3_sequence(
                fmu3,
                &mut Rng::seeded(seed),
                SEQUENCE3,
                &format!("seed {seed}"),
            );
        }
    }
    passed(
        "fmi3_random_call_sequences_always_return_a_status",
        format!(
            "FMI 3.0: random call sequences of {SEQUENCE3} calls of every kind (Co-Simulation \
             with and without Event Mode and early return, Model Exchange, states, crafted \
             states; outputs finite after every accepted step), seeds 1 to {seeds}, on every FMU"
        ),
    );
}

#[test]
fn fmi3_eight_threads_give_each_its_own_single_thread_result() {
    let _serial = serial();
    for (fmu2, fmu3) in all() {
        let name = fmu2.md.model_name.clone();
        let inputs = reals(&fmu2, Causality::Input);
        let outputs: Vec<u32> = reals(&fmu2, Causality::Output)
            .into_iter()
            .map(|(_, vr)| vr)
            .collect();
        let run = |i: usize| {
            let inst = started(&fmu3);
            let mut bits = Vec::new();
            for k in 0..200 {
                let t = k as f64 * 1e-3;
                for (j, (_, vr)) in inputs.iter().enumerate() {
                    let u = 1.0 + 0.5 * ((j + 1 + i) as f64 * 3.0 * t).sin().abs();
                    assert_eq!(inst.set_vr(*vr, u), OK, "{name}: {}", inst.log_text());
                }
                step(&inst, t, 1e-3);
                bits.extend(inst.get(&outputs).1.iter().map(|y| y.to_bits()));
            }
            bits
        };
        let single: Vec<Vec<u64>> = (0..8).map(run).collect();
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..8).map(|i| s.spawn(move || run(i))).collect();
            for (i, h) in handles.into_iter().enumerate() {
                assert!(
                    h.join().unwrap() == single[i],
                    "{name}: FMI 3.0 thread {i}'s result differs from its single-thread run"
                );
            }
        });
    }
    passed(
        "fmi3_eight_threads_give_each_its_own_single_thread_result",
        "FMI 3.0 with Event Mode: 8 threads, each with its own inputs, bit-identical to its own \
         single-thread run"
            .into(),
    );
}

/// One FMI 3.0 Co-Simulation instance in Event Mode through a step, a state taken, serialized,
/// deserialized and freed, and a Model Exchange instance through its modes: for the memory test.
pub fn cycle(fmu3: &Fmu3) {
    let inst = started(fmu3);
    step(&inst, 0.0, 0.01);
    let (_, st) = inst.get_state();
    let bytes = inst.serialize(&st).expect("serialize");
    let (status, back) = inst.deserialize(&bytes);
    assert_eq!(status, OK);
    assert_eq!(inst.free_state(back), OK);
    assert_eq!(inst.free_state(st), OK);
    drop(inst);
    let me = fmu3.model_exchange();
    assert_eq!(me.enter_initialization_mode(None, 0.0, 10.0), OK);
    assert_eq!(me.exit_initialization_mode(), OK);
    assert_eq!(me.event_iteration(), OK);
    assert_eq!(me.enter_continuous_time_mode(), OK);
    assert_eq!(me.derivatives().0, OK);
}
