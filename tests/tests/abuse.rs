//! Every packaged FMU against what a careless master or user may do: illegal call orders, NULL
//! pointers, unknown value references, bad steps, NaN and Inf everywhere, corrupted states,
//! random call sequences, many instances and many threads. Every call must return a status;
//! nothing may crash, hang or leak.

use fmu_harness::scenario::SetByName;
use fmu_harness::sequence::{fmi2_sequence, memcheck, Rng};
use fmu_harness::{components, narrowed, Fmu, Instance, ERROR, OK};
use model_description::{Causality, ScalarVariable, Variability, VariableType};
use std::ffi::{c_char, c_int, c_void};
use std::ptr::{null, null_mut};

// What the tests stand on is in tests/tests/abuse/ by part; the tests are here and, for FMI 3.0,
// in abuse/fmi3.rs.
#[path = "abuse/bookkeeping.rs"]
mod bookkeeping;
#[path = "abuse/driving.rs"]
mod driving;
#[path = "abuse/heap.rs"]
mod heap;
#[path = "abuse/state_tables.rs"]
mod state_tables;

use bookkeeping::{passed, serial};
use driving::{drive, reals, started};
use heap::{heap_in_use, NO_TCACHE};
use state_tables::{set_every_variable, snapshot2, Mode};

#[test]
fn illegal_calls_in_every_state_are_refused_and_change_nothing() {
    let _serial = serial();
    for fmu in Fmu::all() {
        let name = &fmu.md.model_name;
        let inst = fmu.instantiate("states");
        let mut v = [0.0];
        let refuse = |status: c_int, what: &str| {
            assert_eq!(status, ERROR, "{name}: {what} should be refused");
        };
        // Instantiated
        refuse(inst.exit_initialization_mode(), "ExitInit in Instantiated");
        refuse(inst.do_step(0.0, 0.1), "DoStep in Instantiated");
        refuse(inst.terminate(), "Terminate in Instantiated");
        refuse(inst.get_real(&[0], &mut v), "GetReal in Instantiated");
        // Initialization mode
        assert_eq!(inst.setup_experiment(None, 0.0, Some(10.0)), OK);
        assert_eq!(inst.enter_initialization_mode(), OK);
        refuse(
            inst.setup_experiment(None, 0.0, None),
            "SetupExperiment in InitializationMode",
        );
        refuse(inst.enter_initialization_mode(), "EnterInit twice");
        refuse(inst.do_step(0.0, 0.1), "DoStep in InitializationMode");
        refuse(inst.terminate(), "Terminate in InitializationMode");
        assert_eq!(
            inst.exit_initialization_mode(),
            OK,
            "{name}: {}",
            inst.log_text()
        );
        // Step complete
        refuse(
            inst.setup_experiment(None, 0.0, None),
            "SetupExperiment after init",
        );
        refuse(inst.enter_initialization_mode(), "EnterInit after init");
        refuse(inst.exit_initialization_mode(), "ExitInit after init");
        for (output, vr) in reals(&fmu, Causality::Output) {
            refuse(
                inst.set_real(&[vr], &[1.0]),
                &format!("SetReal of output {output}"),
            );
        }
        for (parameter, vr) in reals(&fmu, Causality::Parameter) {
            refuse(
                inst.set_real(&[vr], &[1.0]),
                &format!("SetReal of fixed parameter {parameter}"),
            );
        }
        assert_eq!(
            inst.do_step(0.0, 0.1),
            OK,
            "{name}: the refusals changed nothing: {}",
            inst.log_text()
        );
        // Terminated
        assert_eq!(inst.terminate(), OK);
        refuse(inst.do_step(0.1, 0.1), "DoStep after Terminate");
        refuse(inst.terminate(), "Terminate twice");
        assert_eq!(
            inst.get_real(&[0], &mut v),
            OK,
            "{name}: values stay readable"
        );
        assert_eq!(inst.reset(), OK);
    }
    passed(
        "illegal_calls_in_every_state_are_refused_and_change_nothing",
        "illegal call orders in Instantiated, InitializationMode, StepComplete and Terminated"
            .into(),
    );
}

#[test]
fn set_calls_follow_the_state_tables() {
    let _serial = serial();
    for fmu in Fmu::all() {
        let me = fmu.instantiate_me("table");
        me.initialize(0.0, Some(10.0), &[]);
        assert_eq!(me.event_iteration().0, OK);
        assert_eq!(me.enter_continuous_time_mode(), OK);
        let value = |name: &str| {
            let mut v = [0.0];
            assert_eq!(me.get_real(&[fmu.vr(name)], &mut v), OK);
            v[0]
        };
        set_every_variable(&fmu, &me, Mode::ContinuousTime, &|| snapshot2(&me), &value);
        assert_eq!(me.enter_event_mode(), OK);
        set_every_variable(&fmu, &me, Mode::Event, &|| snapshot2(&me), &value);
        assert_eq!(me.event_iteration().0, OK, "{}", me.log_text());
        let cs = started(&fmu);
        set_every_variable(&fmu, &cs, Mode::Step, &|| snapshot2(&cs), &|_| 0.0);
        assert_eq!(cs.do_step(0.0, 0.1), OK, "{}", cs.log_text());
    }
    passed(
        "set_calls_follow_the_state_tables",
        "every variable set in Continuous-Time Mode, Event Mode and between steps: only what FMI 2.0's state tables allow is written".into(),
    );
}

#[test]
fn null_pointers_and_wrong_lengths() {
    let _serial = serial();
    for fmu in Fmu::all() {
        let name = &fmu.md.model_name;
        let inst = started(&fmu);
        let api = &fmu.api;
        let c = inst.c;
        let mut x = [0.0f64; 4];
        let mut i = [0 as c_int; 4];
        let vr = [0u32];
        unsafe {
            // A NULL instance is refused by every function that takes one.
            assert_eq!((api.do_step)(null_mut(), 0.0, 0.1, 0), ERROR);
            assert_eq!(
                (api.get_real)(null_mut(), vr.as_ptr(), 1, x.as_mut_ptr()),
                ERROR
            );
            assert_eq!(
                (api.set_real)(null_mut(), vr.as_ptr(), 1, x.as_ptr()),
                ERROR
            );
            assert_eq!((api.terminate)(null_mut()), ERROR);
            assert_eq!((api.get_fmu_state)(null_mut(), &mut null_mut()), ERROR);
            (api.free_instance)(null_mut());
            // NULL arrays with a length are refused; with nvr = 0 there is nothing to do.
            assert_eq!(
                (api.get_real)(c, null(), 1, x.as_mut_ptr()),
                ERROR,
                "{name}"
            );
            assert_eq!(
                (api.get_real)(c, vr.as_ptr(), 1, null_mut()),
                ERROR,
                "{name}"
            );
            assert_eq!((api.get_real)(c, null(), 0, null_mut()), OK, "{name}");
            assert_eq!((api.set_real)(c, null(), 0, null()), OK, "{name}");
            assert_eq!((api.set_real)(c, null(), 2, x.as_ptr()), ERROR, "{name}");
            assert_eq!(
                (api.get_integer)(c, null(), 1, i.as_mut_ptr()),
                ERROR,
                "{name}"
            );
            assert_eq!(
                (api.set_real_input_derivatives)(c, null(), 1, null(), null()),
                ERROR,
                "{name}"
            );
            assert_eq!((api.set_debug_logging)(c, 1, 2, null()), ERROR, "{name}");
            let cats: [*const c_char; 1] = [null()];
            assert_eq!(
                (api.set_debug_logging)(c, 1, 1, cats.as_ptr()),
                ERROR,
                "{name}"
            );
            // Directional derivatives of an output by an input (allowed after initialization),
            // with each array NULL in turn.
            let (output, input) = (
                [reals(&fmu, Causality::Output)[0].1],
                [reals(&fmu, Causality::Input)[0].1],
            );
            let (seed, mut d) = ([1.0], [0.0]);
            let derivative = |u: *const u32, k: *const u32, s: *const f64, d: *mut f64| {
                (api.get_directional_derivative)(c, u, 1, k, 1, s, d)
            };
            let (u, k, sd, dd) = (
                output.as_ptr(),
                input.as_ptr(),
                seed.as_ptr(),
                d.as_mut_ptr(),
            );
            let provides = fmu.md.co_simulation.provides_directional_derivative;
            let expected = if provides { OK } else { ERROR };
            assert_eq!(
                derivative(u, k, sd, dd),
                expected,
                "{name}: {}",
                inst.log_text()
            );
            let nulls = [
                ((null(), k, sd, dd), "unknowns"),
                ((u, null(), sd, dd), "knowns"),
                ((u, k, null(), dd), "seed"),
                ((u, k, sd, null_mut()), "sensitivity"),
            ];
            for (args, what) in nulls.into_iter().filter(|_| provides) {
                inst.clear_log();
                assert_eq!(
                    derivative(args.0, args.1, args.2, args.3),
                    ERROR,
                    "{name}: {what}"
                );
                assert!(
                    inst.log_text().contains("NULL"),
                    "{name}: {what}: {}",
                    inst.log_text()
                );
            }
            // FMU states
            assert_eq!((api.get_fmu_state)(c, null_mut()), ERROR, "{name}");
            assert_eq!((api.set_fmu_state)(c, null_mut()), ERROR, "{name}");
            assert_eq!((api.free_fmu_state)(c, null_mut()), OK, "{name}");
            let mut none: *mut c_void = null_mut();
            assert_eq!((api.free_fmu_state)(c, &mut none), OK, "{name}");
            let mut size = 0usize;
            assert_eq!(
                (api.serialized_fmu_state_size)(c, null_mut(), &mut size),
                ERROR,
                "{name}"
            );
            assert_eq!(
                (api.deserialize_fmu_state)(c, null(), 10, &mut none),
                ERROR,
                "{name}"
            );
            let (_, s) = inst.get_state();
            assert_eq!(
                (api.serialized_fmu_state_size)(c, s.0, null_mut()),
                ERROR,
                "{name}"
            );
            assert_eq!(
                (api.serialize_fmu_state)(c, s.0, null_mut(), 1000),
                ERROR,
                "{name}"
            );
            let mut small = [0 as c_char; 4];
            assert_eq!(
                (api.serialize_fmu_state)(c, s.0, small.as_mut_ptr(), 4),
                ERROR,
                "{name}"
            );
            inst.free_state(s);
            // Status queries with NULL outputs
            assert_eq!((api.get_real_status)(c, 2, null_mut()), ERROR, "{name}");
            assert_eq!((api.get_boolean_status)(c, 3, null_mut()), ERROR, "{name}");
            // Instantiate: NULL name or GUID gives NULL; NULL callbacks are tolerated.
            let guid = std::ffi::CString::new(fmu.md.guid.clone()).unwrap();
            let nm = c"x";
            assert!((api.instantiate)(null(), 1, guid.as_ptr(), null(), null(), 0, 0).is_null());
            assert!((api.instantiate)(nm.as_ptr(), 1, null(), null(), null(), 0, 0).is_null());
            let quiet = (api.instantiate)(nm.as_ptr(), 1, guid.as_ptr(), null(), null(), 0, 1);
            assert!(
                !quiet.is_null(),
                "{name}: NULL callbacks and resources are tolerated"
            );
            assert_eq!(
                (api.do_step)(quiet, 0.0, 0.1, 0),
                ERROR,
                "{name}: and still checked"
            );
            (api.free_instance)(quiet);
        }
        // Unknown value references and wrong types
        let mut v = [0.0];
        assert_eq!(inst.get_real(&[u32::MAX], &mut v), ERROR, "{name}");
        assert_eq!(inst.set_real(&[99_999], &[1.0]), ERROR, "{name}");
        assert_eq!(
            unsafe { (api.get_integer)(c, [0u32].as_ptr(), 1, i.as_mut_ptr()) },
            ERROR,
            "{name}: vr 0 is a Real"
        );
        assert_eq!(inst.do_step(0.0, 0.1), OK, "{name}: {}", inst.log_text());
    }
    passed("null_pointers_and_wrong_lengths", "NULL instance, NULL arrays with and without a length, NULL FMU states and outputs, unknown value references and wrong variable types".into());
}

#[test]
fn bad_steps_are_refused() {
    let _serial = serial();
    for fmu in Fmu::all() {
        let name = &fmu.md.model_name;
        let inst = started(&fmu);
        for (t, h, why) in [
            (0.0, 0.0, "zero step"),
            (0.0, -0.1, "negative step"),
            (0.0, f64::NAN, "NaN step"),
            (0.5, 0.1, "wrong communication point"),
            (f64::INFINITY, 0.1, "infinite communication point"),
            (0.0, 10.5, "past the stop time"),
        ] {
            assert_eq!(inst.do_step(t, h), ERROR, "{name}: {why}");
        }
        assert_eq!(inst.do_step(0.0, 0.1), OK, "{name}: {}", inst.log_text());
    }
    passed(
        "bad_steps_are_refused",
        "doStep with zero, negative, NaN and too long steps, and a wrong communication point"
            .into(),
    );
}

#[test]
fn nan_and_inf_in_every_input_and_parameter_are_refused() {
    let _serial = serial();
    for fmu in Fmu::all() {
        let name = &fmu.md.model_name;
        for causality in [Causality::Parameter, Causality::Input] {
            let inst = fmu.instantiate("nan");
            assert_eq!(inst.enter_initialization_mode(), OK);
            for (var, vr) in reals(&fmu, causality) {
                let mut before = [0.0];
                assert_eq!(inst.get_real(&[vr], &mut before), OK);
                for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                    assert_eq!(inst.set_real(&[vr], &[bad]), ERROR, "{name}: {var} = {bad}");
                }
                let mut after = [0.0];
                assert_eq!(inst.get_real(&[vr], &mut after), OK);
                assert_eq!(
                    before[0].to_bits(),
                    after[0].to_bits(),
                    "{name}: {var} changed"
                );
                assert!(
                    inst.log_text().contains(&format!("{var} = NaN")),
                    "{name}: {}",
                    inst.log_text()
                );
            }
            assert_eq!(
                inst.exit_initialization_mode(),
                OK,
                "{name}: {}",
                inst.log_text()
            );
        }
    }
    passed(
        "nan_and_inf_in_every_input_and_parameter_are_refused",
        "NaN, +Inf and -Inf in every Real input and parameter".into(),
    );
}

#[test]
fn truncated_and_corrupted_states_are_rejected() {
    let _serial = serial();
    for fmu in Fmu::all() {
        let name = &fmu.md.model_name;
        let inst = started(&fmu);
        assert_eq!(inst.do_step(0.0, 0.1), OK);
        let (_, s) = inst.get_state();
        let bytes = inst.serialize(&s).unwrap();
        inst.free_state(s);
        for n in 0..bytes.len() {
            let (status, s) = inst.deserialize(&bytes[..n]);
            assert_eq!(status, ERROR, "{name}: truncated to {n} bytes");
            assert!(s.0.is_null());
        }
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x41;
            assert_eq!(inst.deserialize(&bad).0, ERROR, "{name}: byte {i} flipped");
        }
        // Another model's state is refused too.
        let other = components()
            .unwrap()
            .into_iter()
            .find(|c| c.model != *name)
            .map(|c| Fmu::load(&c.model))
            .unwrap();
        let o = started(&other);
        let (_, os) = o.get_state();
        let other_bytes = o.serialize(&os).unwrap();
        o.free_state(os);
        assert_eq!(inst.deserialize(&other_bytes).0, ERROR, "{name}");
        // The original still loads and the instance goes on.
        let (status, s) = inst.deserialize(&bytes);
        assert_eq!(status, OK);
        assert_eq!(inst.set_state(&s), OK);
        inst.free_state(s);
        assert_eq!(inst.do_step(0.1, 0.1), OK, "{name}: {}", inst.log_text());
    }
    passed("truncated_and_corrupted_states_are_rejected", "every truncation and every single-byte corruption of a serialized state, another model's state".into());
}

/// Seeds 1..=20 of the call sequences (`fmu_harness::sequence`), through every packaged FMU:
/// a replayable regression set, its first six also run under valgrind by `cargo xtask
/// memcheck`. The coverage-guided fuzzer (`fuzz/`, `cargo xtask fuzz`) draws further sequences
/// from its inputs.
#[test]
fn random_call_sequences_always_return_a_status() {
    let _serial = serial();
    let fmus = Fmu::all();
    // Under valgrind (about 50 times slower) the first few: the coverage-guided fuzzer runs
    // with AddressSanitizer on the sequences beyond them.
    let seeds = if memcheck() { MEMCHECK_SEEDS } else { SEEDS };
    for seed in 1..=seeds {
        for fmu in &fmus {
            fmi2_sequence(
                fmu,
                &mut Rng::seeded(seed),
                SEQUENCE,
                &format!("seed {seed}"),
            );
        }
    }
    passed(
        "random_call_sequences_always_return_a_status",
        format!(
            "random call sequences of {SEQUENCE} calls of the CS and ME APIs on CS and ME \
             instances, with random values (outputs finite after every accepted step): seeds 1 \
             to {seeds}, on every FMU"
        ),
    );
}

const SEQUENCE: usize = 200;
const SEEDS: u64 = 20;
const MEMCHECK_SEEDS: u64 = 6;

#[test]
fn instances_and_states_free_all_their_memory() {
    let test = "instances_and_states_free_all_their_memory";
    // valgrind replaces malloc (and memcheck itself reports every leak); elsewhere the heap is
    // measured in a child process of this test binary started without glibc's tcache.
    if !memcheck() && std::env::var("GLIBC_TUNABLES").ok().as_deref() != Some(NO_TCACHE) {
        let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args([test, "--exact", "--nocapture", "--test-threads=1"])
            .env("GLIBC_TUNABLES", NO_TCACHE)
            .output()
            .expect("re-run the test without tcache");
        let text = String::from_utf8_lossy(&out.stderr);
        eprint!("{text}");
        assert!(out.status.success(), "{test} without tcache failed: {text}");
        // The child ran the test body; it must not pass on running nothing.
        assert!(text.contains("bytes of heap per live instance"), "{text}");
        return;
    }
    let _serial = serial();
    for fmu in Fmu::all() {
        let name = &fmu.md.model_name;
        let fmu3 = fmu_harness::fmi3::Fmu3::load(name);
        let cycle = |n: usize| {
            for _ in 0..n {
                // FMI 3.0: Co-Simulation in Event Mode with its states, and Model Exchange.
                fmi3::cycle(&fmu3);
                let inst = started(&fmu);
                assert_eq!(inst.do_step(0.0, 0.01), OK);
                // And a Model Exchange instance through its modes.
                let me = fmu.instantiate_me("abuse me");
                me.initialize(0.0, Some(10.0), &[]);
                assert_eq!(me.event_iteration().0, OK);
                assert_eq!(me.enter_continuous_time_mode(), OK);
                assert_eq!(me.derivatives().0, OK);
                let (_, s) = me.get_state();
                assert_eq!(me.free_state(s), OK);
                drop(me);
                let (_, s) = inst.get_state();
                let bytes = inst.serialize(&s).expect("serialize");
                let (status, back) = inst.deserialize(&bytes);
                assert_eq!(status, OK);
                assert_eq!(inst.free_state(back), OK);
                assert_eq!(inst.free_state(s), OK);
            }
        };
        // Under valgrind every block not freed is reported by memcheck itself, from one cycle
        // on: a few do; the thousand cycles are for the heap's growth, measured natively.
        let (warm, cycles, live) = if memcheck() {
            (1, 2, 3)
        } else {
            (10, 1000, 100)
        };
        cycle(warm);
        let before = heap_in_use();
        cycle(cycles);
        let growth = heap_in_use() as i64 - before as i64;
        if !memcheck() {
            // One leaked FMU state or instance per cycle would be over 100 kB.
            assert!(
                growth < 4096,
                "{name}: the heap grew by {growth} bytes over 1000 instances with states"
            );
        }
        // Memory per live instance, for the report.
        let base = heap_in_use();
        let live: Vec<_> = (0..live).map(|_| started(&fmu)).collect();
        let per = (heap_in_use() - base) as f64 / live.len() as f64;
        drop(live);
        eprintln!("{name}: {per:.0} bytes of heap per live instance");
    }
    passed(test, "1010 Co-Simulation and 1010 Model Exchange instances of FMI 2.0 and as many of FMI 3.0 (Co-Simulation in Event Mode) created, run, snapshotted, serialized and freed: the heap in use (glibc's mallinfo2, which sees the FMU's allocations) grows by less than 4 KiB".into());
}

#[test]
fn rollback_and_serialized_states_repeat_the_run_bit_for_bit() {
    let _serial = serial();
    for fmu in Fmu::all() {
        let name = &fmu.md.model_name;
        let inputs = reals(&fmu, Causality::Input);
        let outputs = reals(&fmu, Causality::Output);
        let inst = started(&fmu);
        drive(&inst, &inputs, &outputs, 0..200, 1);
        let (status, state) = inst.get_state();
        assert_eq!(status, OK);
        let bytes = inst.serialize(&state).expect("serialize");
        let first = drive(&inst, &inputs, &outputs, 200..500, 1);
        assert_eq!(inst.set_state(&state), OK);
        let again = drive(&inst, &inputs, &outputs, 200..500, 1);
        assert!(again == first, "{name}: the run after a rollback differs");
        // The serialized state, in a new instance.
        let other = started(&fmu);
        let (status, restored) = other.deserialize(&bytes);
        assert_eq!(status, OK);
        assert_eq!(other.set_state(&restored), OK);
        let elsewhere = drive(&other, &inputs, &outputs, 200..500, 1);
        assert!(
            elsewhere == first,
            "{name}: the run from a serialized state differs"
        );
        assert_eq!(inst.free_state(state), OK);
        assert_eq!(other.free_state(restored), OK);
    }
    passed("rollback_and_serialized_states_repeat_the_run_bit_for_bit", "a rollback to a mid-run FMU state, and the serialized state in a new instance, repeat 300 steps bit for bit".into());
}

#[test]
fn eight_threads_give_each_its_own_single_thread_result() {
    let _serial = serial();
    for fmu in Fmu::all() {
        let name = &fmu.md.model_name;
        let inputs = reals(&fmu, Causality::Input);
        let outputs = reals(&fmu, Causality::Output);
        // Run i starts from its own angles and speeds and gets inputs of its own amplitude and
        // frequency, so a thread that read another's instance would give another's result.
        let starts: Vec<String> = reals(&fmu, Causality::Parameter)
            .into_iter()
            .map(|(n, _)| n)
            .filter(|n| n.ends_with("_start") && (n.starts_with('w') || n.starts_with("phi")))
            .collect();
        let run = |fmu: &Fmu, i: usize| {
            let inst = fmu.instantiate("thread");
            let shift = 0.1 * i as f64;
            let params: Vec<(&str, f64)> = starts.iter().map(|n| (n.as_str(), shift)).collect();
            inst.initialize(0.0, Some(10.0), &params);
            drive(&inst, &inputs, &outputs, 0..300, i)
        };
        let single: Vec<Vec<u64>> = (0..8).map(|i| run(&fmu, i)).collect();
        assert!(
            single.windows(2).all(|w| w[0] != w[1]),
            "{name}: the runs must differ from each other"
        );
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    let run = &run;
                    let fmu = &fmu;
                    s.spawn(move || run(fmu, i))
                })
                .collect();
            for (i, h) in handles.into_iter().enumerate() {
                assert!(
                    h.join().unwrap() == single[i],
                    "{name}: thread {i}'s result differs from its single-thread run"
                );
            }
        });
    }
    passed("eight_threads_give_each_its_own_single_thread_result", "8 threads, each with its own start values and inputs, bit-identical to its own single-thread run".into());
}

#[path = "abuse/fmi3.rs"]
mod fmi3;
