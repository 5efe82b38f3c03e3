//! The FMI 2.0 Co-Simulation runtime, exercised through the Gear FMU's C ABI: life cycle,
//! state machine, FMU state, instances and threads, bad parameters and inputs, logging.

use fmu_harness::{Fmu, Instance, DISCARD, ERROR, OK};
use std::ffi::{c_int, CStr};

const H: f64 = 1e-3;

/// Steps from step number `k0` with a torque pattern and returns every output after each step,
/// as bits (time is `k * H`, computed the same way in every run).
fn trajectory(inst: &Instance, k0: usize, steps: usize) -> Vec<u64> {
    let outputs: Vec<u32> = ["phi_a", "w_a", "a_a", "phi_b", "w_b", "a_b", "tau_mesh"]
        .iter()
        .map(|n| inst.fmu.vr(n))
        .collect();
    let mut values = vec![0.0; outputs.len()];
    let mut bits = Vec::new();
    for k in k0..k0 + steps {
        let t = k as f64 * H;
        inst.set("tau_a", (7.0 * t).sin());
        inst.set("tau_b", 0.3 - t);
        assert_eq!(inst.do_step(t, H), OK, "{}", inst.log_text());
        assert_eq!(inst.get_real(&outputs, &mut values), OK);
        bits.extend(values.iter().map(|v| v.to_bits()));
    }
    bits
}

fn fresh<'a>(fmu: &'a Fmu, name: &str) -> Instance<'a> {
    let inst = fmu.instantiate(name);
    inst.initialize(0.0, Some(10.0), &[("w_b_start", 0.25)]);
    inst
}

#[test]
fn reset_returns_to_the_state_after_instantiation() {
    let fmu = Fmu::load("Gear");
    let inst = fresh(&fmu, "reset");
    let first = trajectory(&inst, 0, 300);
    assert_eq!(inst.reset(), OK);
    // Right after instantiation: getting values is not allowed, defaults are back.
    let mut v = [0.0];
    assert_eq!(inst.get_real(&[fmu.vr("w_b")], &mut v), ERROR);
    // The same experiment as the first run (the tolerance picks the integrator's pair).
    assert_eq!(inst.setup_experiment(Some(1e-10), 0.0, Some(10.0)), OK);
    assert_eq!(inst.enter_initialization_mode(), OK);
    assert_eq!(
        inst.real("ratio"),
        2.0,
        "parameters are back to their start values"
    );
    assert_eq!(inst.real("w_b_start"), 0.0);
    assert_eq!(inst.set("w_b_start", 0.25), OK);
    assert_eq!(inst.exit_initialization_mode(), OK);
    assert!(trajectory(&inst, 0, 300) == first, "differs after reset");
}

#[test]
fn rollback_reproduces_the_continuation_bit_for_bit() {
    let fmu = Fmu::load("Gear");
    let inst = fresh(&fmu, "rollback");
    trajectory(&inst, 0, 200);
    let (status, state) = inst.get_state();
    assert_eq!(status, OK);
    let first = trajectory(&inst, 200, 300);
    assert_eq!(inst.set_state(&state), OK);
    let second = trajectory(&inst, 200, 300);
    assert!(first == second, "rollback is not bit-identical");
    // The state can be overwritten in place and used again.
    let mut slot = state;
    let status = unsafe { (fmu.api.get_fmu_state)(inst.c, &mut slot.0) };
    assert_eq!(status, OK);
    assert_eq!(inst.set_state(&slot), OK);
    let from_slot = trajectory(&inst, 500, 10);
    assert_eq!(inst.set_state(&slot), OK);
    assert!(
        trajectory(&inst, 500, 10) == from_slot,
        "the overwritten state holds t = 0.5"
    );
    assert_eq!(inst.free_state(slot), OK);
}

#[test]
fn serialized_state_continues_in_another_instance() {
    let fmu = Fmu::load("Gear");
    let a = fresh(&fmu, "a");
    trajectory(&a, 0, 123);
    let (_, state) = a.get_state();
    let bytes = a.serialize(&state).expect("serialize");
    assert_eq!(a.free_state(state), OK);

    let b = fmu.instantiate("b");
    let (status, restored) = b.deserialize(&bytes);
    assert_eq!(status, OK, "{}", b.log_text());
    assert_eq!(b.set_state(&restored), OK, "{}", b.log_text());
    assert_eq!(b.free_state(restored), OK);
    assert!(
        trajectory(&a, 123, 200) == trajectory(&b, 123, 200),
        "trajectories differ"
    );

    // A truncated or corrupted state is rejected and changes nothing.
    let before = b.real("w_b");
    for n in [0, 7, 20, bytes.len() - 1] {
        let (status, s) = b.deserialize(&bytes[..n]);
        assert_eq!(status, ERROR, "truncated to {n}");
        assert!(s.0.is_null());
    }
    let mut bad = bytes.clone();
    bad[3] ^= 0x55;
    assert_eq!(b.deserialize(&bad).0, ERROR);
    assert!(b.log_text().contains("FMU state"), "{}", b.log_text());
    assert_eq!(b.real("w_b"), before);
}

#[test]
fn independent_instances_in_one_process_and_on_two_threads() {
    let fmu = Fmu::load("Gear");
    let reference = {
        let inst = fresh(&fmu, "alone");
        trajectory(&inst, 0, 500)
    };
    // Interleaved with a differently parameterised instance: no shared state.
    let a = fresh(&fmu, "a");
    let b = fmu.instantiate("b");
    b.initialize(0.0, None, &[("ratio", -7.0), ("J_a", 3.0)]);
    let mut from_a = Vec::new();
    for k in 0..50 {
        from_a.extend(trajectory(&a, k * 10, 10));
        trajectory(&b, k * 10, 10);
    }
    assert!(from_a == reference, "interleaved instance differs");
    assert_ne!(b.real("w_a"), a.real("w_a"));

    let fmu = &fmu;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|i| {
                scope.spawn(move || {
                    let inst = fresh(fmu, &format!("thread{i}"));
                    trajectory(&inst, 0, 500)
                })
            })
            .collect();
        for h in handles {
            assert!(h.join().unwrap() == reference, "thread result differs");
        }
    });
}

#[test]
fn illegal_call_sequences_are_refused_with_a_reason() {
    let fmu = Fmu::load("Gear");
    let inst = fmu.instantiate("sequence");
    let expect_refused = |status: c_int, function: &str| {
        assert_eq!(status, ERROR, "{function} should be refused");
        let log = inst.log_text();
        assert!(
            log.contains(function) && log.contains("not allowed"),
            "{function}: {log}"
        );
        inst.clear_log();
    };
    // Instantiated
    expect_refused(inst.do_step(0.0, H), "fmi2DoStep");
    expect_refused(
        inst.exit_initialization_mode(),
        "fmi2ExitInitializationMode",
    );
    expect_refused(inst.terminate(), "fmi2Terminate");
    let mut v = [0.0];
    expect_refused(inst.get_real(&[0], &mut v), "fmi2GetReal");
    // Initialization mode
    assert_eq!(inst.setup_experiment(None, 0.0, Some(1.0)), OK);
    assert_eq!(inst.enter_initialization_mode(), OK);
    expect_refused(
        inst.setup_experiment(None, 0.0, None),
        "fmi2SetupExperiment",
    );
    expect_refused(
        inst.enter_initialization_mode(),
        "fmi2EnterInitializationMode",
    );
    expect_refused(inst.do_step(0.0, H), "fmi2DoStep");
    assert_eq!(inst.exit_initialization_mode(), OK);
    // Step complete: parameters are fixed, outputs are never settable.
    expect_refused(
        inst.exit_initialization_mode(),
        "fmi2ExitInitializationMode",
    );
    assert_eq!(inst.set("ratio", 3.0), ERROR);
    assert!(inst.log_text().contains("ratio"), "{}", inst.log_text());
    assert_eq!(inst.set("w_b", 3.0), ERROR);
    assert_eq!(inst.real("ratio"), 2.0);
    // Wrong communication point, non-positive step, a step past the stop time.
    assert_eq!(inst.do_step(0.5, H), ERROR);
    assert!(inst.log_text().contains("currentCommunicationPoint"));
    assert_eq!(inst.do_step(0.0, 0.0), ERROR);
    assert_eq!(inst.do_step(0.0, -H), ERROR);
    assert_eq!(inst.do_step(0.0, 1.5), ERROR);
    assert!(inst.log_text().contains("stop time"), "{}", inst.log_text());
    // The refused calls changed nothing: stepping to the stop time still works.
    assert_eq!(inst.do_step(0.0, 1.0), OK, "{}", inst.log_text());
    assert_eq!(inst.terminate(), OK);
    expect_refused(inst.do_step(1.0, H), "fmi2DoStep");
    expect_refused(inst.terminate(), "fmi2Terminate");
    assert_eq!(inst.reset(), OK);
    // NULL instance: refused, no crash.
    assert_eq!(
        unsafe { (fmu.api.do_step)(std::ptr::null_mut(), 0.0, H, 0) },
        ERROR
    );
    assert_eq!(unsafe { (fmu.api.reset)(std::ptr::null_mut()) }, ERROR);
    unsafe { (fmu.api.free_instance)(std::ptr::null_mut()) };
}

#[test]
fn instantiation_checks_guid_and_type_and_tolerates_null_resources() {
    let fmu = Fmu::load("Gear");
    let guid = fmu.md.guid.clone();
    let log = fmu
        .instantiate_with("x", "{wrong}", 1, None)
        .err()
        .expect("wrong GUID");
    assert!(log.contains("{wrong}"), "{log}");
    let log = fmu
        .instantiate_with("x", &guid, 2, None)
        .err()
        .expect("no such fmuType");
    assert!(log.contains("fmuType 2"), "{log}");
    // Model Exchange (0) and Co-Simulation (1) are both offered.
    assert!(fmu.instantiate_with("x", &guid, 0, None).is_ok());
    let inst = fmu
        .instantiate_with("x", &guid, 1, None)
        .expect("NULL resource location is fine");
    inst.initialize(0.0, None, &[]);
    assert_eq!(inst.do_step(0.0, H), OK);
    let platform = unsafe { CStr::from_ptr((fmu.api.get_types_platform)()) };
    let version = unsafe { CStr::from_ptr((fmu.api.get_version)()) };
    assert_eq!(
        (platform.to_str().unwrap(), version.to_str().unwrap()),
        ("default", "2.0")
    );
}

#[test]
fn bad_parameters_fail_initialization_naming_variable_value_and_time() {
    let fmu = Fmu::load("Gear");
    for (params, name, value) in [
        (vec![("ratio", 0.0)], "ratio", "0"),
        (vec![("J_a", 0.0), ("J_b", 0.0)], "J_reflected", "0"),
    ] {
        let inst = fmu.instantiate("bad");
        assert_eq!(inst.setup_experiment(None, 0.25, None), OK);
        for (n, v) in &params {
            assert_eq!(inst.set(n, *v), OK);
        }
        assert_eq!(inst.enter_initialization_mode(), OK);
        assert_eq!(inst.exit_initialization_mode(), ERROR);
        let log = inst.log_text();
        assert!(
            log.contains(&format!("{name} = {value}")) && log.contains("t = 0.25"),
            "{log}"
        );
        // Values can still be read in the Error state, and none is NaN.
        for v in &fmu.md.model_variables {
            assert!(
                inst.real(&v.name).is_finite(),
                "{} after a failed initialization",
                v.name
            );
        }
        // The instance is in the Error state: stepping is refused, reset recovers.
        assert_eq!(inst.do_step(0.25, H), ERROR);
        assert_eq!(inst.reset(), OK);
        inst.initialize(0.0, None, &[]);
        assert_eq!(inst.do_step(0.0, H), OK);
    }
    // Out of a declared range or not a number: refused at once, the old value stays.
    let inst = fmu.instantiate("range");
    for (name, value) in [("J_a", -1.0), ("ratio", f64::NAN), ("J_b", f64::INFINITY)] {
        assert_eq!(inst.set(name, value), ERROR);
        let log = inst.log_text();
        assert!(log.contains(&format!("{name} = {value}")), "{log}");
    }
    inst.initialize(0.0, None, &[]);
    assert_eq!(inst.real("J_a"), 0.1);
}

#[test]
fn nan_inputs_are_refused_and_leave_the_state_untouched() {
    let fmu = Fmu::load("Gear");
    let inst = fresh(&fmu, "nan");
    trajectory(&inst, 0, 100);
    let (_, state) = inst.get_state();
    let before = inst.serialize(&state).unwrap();
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        // Set together with a valid value: all or nothing.
        let vrs = [fmu.vr("tau_b"), fmu.vr("tau_a")];
        assert_eq!(inst.set_real(&vrs, &[1.0, bad]), ERROR);
        let log = inst.log_text();
        assert!(
            log.contains(&format!("tau_a = {bad}")) && log.contains("t = 0.1"),
            "{log}"
        );
    }
    let (_, after_state) = inst.get_state();
    assert_eq!(
        inst.serialize(&after_state).unwrap(),
        before,
        "nothing changed"
    );
    inst.free_state(after_state);
    inst.free_state(state);
    // And the instance goes on exactly as a twin that never saw the bad values.
    let twin = fresh(&fmu, "twin");
    trajectory(&twin, 0, 100);
    assert!(trajectory(&inst, 100, 10) == trajectory(&twin, 100, 10));
    let vr = [fmu.vr("tau_a")];
    assert_eq!(inst.set_input_derivatives(&vr, &[1], &[f64::NAN]), ERROR);
    // Only a Real input has a derivative: an output or a parameter is refused, naming it.
    for name in ["w_a", "J_a"] {
        assert_eq!(
            inst.set_input_derivatives(&[fmu.vr(name)], &[1], &[1.0]),
            ERROR
        );
        let log = inst.log_text();
        assert!(
            log.contains(&format!("{name} is not a Real input")),
            "{log}"
        );
    }
}

#[test]
fn logging_honours_categories_and_passes_messages_through_percent_s() {
    let fmu = Fmu::load("Gear");
    let inst = fresh(&fmu, "log");
    assert_eq!(inst.set_debug_logging(true, &["logCalls"]), OK);
    inst.clear_log();
    inst.do_step(0.0, H);
    assert!(inst
        .log()
        .iter()
        .any(|l| l.category == "logCalls" && l.message == "fmi2DoStep"));
    assert_eq!(inst.set_debug_logging(false, &[]), OK);
    inst.clear_log();
    inst.do_step(H, H);
    assert!(inst.log().is_empty(), "{}", inst.log_text());
    // A '%' reaches the logger as data: the FMU calls it with format "%s".
    assert_eq!(inst.set_debug_logging(true, &["%s%n%d"]), ERROR);
    assert!(inst.log_text().contains("'%s%n%d'"), "{}", inst.log_text());
}

#[test]
fn status_queries_and_unsupported_functions() {
    let fmu = Fmu::load("Gear");
    let inst = fresh(&fmu, "status");
    trajectory(&inst, 0, 5);
    let mut t = 0.0;
    assert_eq!(unsafe { (fmu.api.get_real_status)(inst.c, 2, &mut t) }, OK);
    assert!((t - 5.0 * H).abs() < 1e-15);
    let mut terminated: c_int = 7;
    assert_eq!(
        unsafe { (fmu.api.get_boolean_status)(inst.c, 3, &mut terminated) },
        OK
    );
    assert_eq!(terminated, 0);
    let mut i: c_int = 0;
    assert_eq!(unsafe { (fmu.api.get_status)(inst.c, 0, &mut i) }, DISCARD);
    assert_eq!(unsafe { (fmu.api.cancel_step)(inst.c) }, ERROR);
    let vr = [fmu.vr("w_b")];
    let mut dv = [0.0];
    let status = unsafe {
        (fmu.api.get_directional_derivative)(
            inst.c,
            vr.as_ptr(),
            1,
            vr.as_ptr(),
            1,
            [1.0].as_ptr(),
            dv.as_mut_ptr(),
        )
    };
    // The Gear provides them (tests/tests/directional.rs): the speed along itself is 1.
    assert_eq!(status, OK, "{}", inst.log_text());
    assert_eq!(dv, [1.0]);
    // Output derivatives: order 1 of Real outputs only.
    let derivative = |vr: u32, order: c_int, dv: &mut [f64; 1]| unsafe {
        (fmu.api.get_real_output_derivatives)(
            inst.c,
            [vr].as_ptr(),
            1,
            [order].as_ptr(),
            dv.as_mut_ptr(),
        )
    };
    assert_eq!(derivative(fmu.vr("w_b"), 1, &mut dv), OK);
    assert_eq!(derivative(fmu.vr("w_b"), 2, &mut dv), ERROR);
    assert!(inst.log_text().contains("derivative order 2 of w_b"));
    assert_eq!(derivative(fmu.vr("ratio"), 1, &mut dv), ERROR);
    assert!(inst.log_text().contains("ratio (vr"), "{}", inst.log_text());
    // Types the model does not have: unknown value references are refused.
    let mut b: c_int = 0;
    assert_eq!(
        unsafe { (fmu.api.get_boolean)(inst.c, vr.as_ptr(), 1, &mut b) },
        ERROR
    );
    assert_eq!(
        unsafe { (fmu.api.get_boolean)(inst.c, vr.as_ptr(), 0, &mut b) },
        OK
    );
    let mut x = [0.0];
    assert_eq!(inst.get_real(&[999], &mut x), ERROR);
    assert!(inst.log_text().contains("unknown value reference 999"));
}

/// The parameters' Start column of `model`'s table in docs/variables.md (a declaration written
/// apart from the binary's variable table): name and value, where the start is a single number.
fn documented_starts(model: &str) -> Vec<(String, f64)> {
    let page =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/variables.md"))
            .expect("docs/variables.md");
    let section = page
        .split(&format!("\n## {model}\n"))
        .nth(1)
        .expect("the model's section")
        .split("\n## ")
        .next()
        .unwrap();
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let name = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            if *cells.get(2)? != "parameter" || name.contains('`') {
                return None;
            }
            Some((name.to_string(), cells.get(4)?.parse().ok()?))
        })
        .collect()
}

#[test]
fn the_binary_starts_from_the_documented_values() {
    let fmu = Fmu::load("Gear");
    let inst = fmu.instantiate("starts");
    assert_eq!(inst.enter_initialization_mode(), OK);
    let documented = documented_starts("Gear");
    let names: Vec<&str> = documented.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["ratio", "J_a", "J_b", "phi_b_start", "w_b_start"],
        "docs/variables.md documents every parameter"
    );
    for (name, value) in &documented {
        assert_eq!(inst.real(name), *value, "{name}");
        let declared = fmu.md.model_variables.iter().find(|v| v.name == *name);
        let Some(model_description::VariableType::Real {
            start: Some(start), ..
        }) = declared.map(|v| &v.kind)
        else {
            panic!("{name} has no Real start in modelDescription.xml");
        };
        assert_eq!(start, value, "{name} in modelDescription.xml");
    }
    // Every variable is described; every unit of the project is defined.
    for v in &fmu.md.model_variables {
        assert!(!v.description.is_empty(), "{} has no description", v.name);
    }
    let units: Vec<&str> = fmu
        .md
        .unit_definitions
        .iter()
        .map(|u| u.name.as_str())
        .collect();
    for u in [
        "rad", "rad/s", "rad/s2", "N.m", "kg.m2", "N", "m", "m/s", "m/s2", "kg", "W",
    ] {
        assert!(units.contains(&u), "unit {u} missing");
    }
    let rpm = fmu
        .md
        .unit_definitions
        .iter()
        .find(|u| u.name == "rad/s")
        .unwrap();
    assert_eq!(rpm.display_units[0].name, "rpm");
    assert!((rpm.display_units[0].factor - 30.0 / std::f64::consts::PI).abs() < 1e-12);
    // Value references are the positions in the table and unique.
    for (i, v) in fmu.md.model_variables.iter().enumerate() {
        assert_eq!(v.value_reference as usize, i);
    }
}

/// fmi2GetRealOutputDerivatives against the outputs themselves: for every FMU, after a stretch
/// of steps with changing inputs, the derivative of every Real output must match the third-order
/// one-sided difference of the outputs over three tiny steps (h = 1e-6 s, tolerance 1e-12), with
/// the inputs held and again with them ramping (fmi2SetRealInputDerivatives, each input set on
/// its ramp at every tiny step). Measured: within 1e-8 of each output's scale, 1.4e-6 for
/// VariableRatioTransmission (a second-order difference left 9e-6 there: its compliance
/// oscillates at about 2000 rad/s).
#[test]
fn output_derivatives_match_differences_of_the_outputs_over_tiny_steps() {
    use model_description::{Causality, VariableType};
    for (fmu, ramp) in Fmu::all().iter().flat_map(|f| [(f, false), (f, true)]) {
        let name = &fmu.md.model_name;
        let of = |causality: Causality| -> Vec<(String, u32)> {
            fmu.md
                .model_variables
                .iter()
                .filter(|v| v.causality == causality && matches!(v.kind, VariableType::Real { .. }))
                .map(|v| (v.name.clone(), v.value_reference))
                .collect()
        };
        let (inputs, outputs) = (of(Causality::Input), of(Causality::Output));
        let inst = fmu.instantiate("derivatives");
        assert_eq!(inst.setup_experiment(Some(1e-12), 0.0, None), OK);
        assert_eq!(inst.enter_initialization_mode(), OK);
        assert_eq!(inst.exit_initialization_mode(), OK);
        let input = |t: f64, j: usize, n: &str| {
            if n == "r" {
                1.2 + 0.3 * t
            } else {
                (2.0 + j as f64) * (3.0 * t + j as f64).sin()
            }
        };
        let steps = 123;
        for k in 0..steps {
            let t = k as f64 * H;
            for (j, (n, vr)) in inputs.iter().enumerate() {
                assert_eq!(inst.set_real(&[*vr], &[input(t, j, n)]), OK);
            }
            assert_eq!(inst.do_step(t, H), OK, "{name}: {}", inst.log_text());
        }
        let t = steps as f64 * H;
        // The inputs as they are (set at the last step's start), and a slope for each.
        let held: Vec<f64> = (0..inputs.len())
            .map(|j| input((steps - 1) as f64 * H, j, &inputs[j].0))
            .collect();
        let slopes: Vec<f64> = (0..inputs.len())
            .map(|j| if ramp { 0.3 + j as f64 } else { 0.0 })
            .collect();
        let on_ramp = |at: f64| {
            for (j, (_, vr)) in inputs.iter().enumerate() {
                assert_eq!(inst.set_real(&[*vr], &[held[j] + slopes[j] * (at - t)]), OK);
                if ramp {
                    assert_eq!(inst.set_input_derivatives(&[*vr], &[1], &[slopes[j]]), OK);
                }
            }
        };
        on_ramp(t);
        let vrs: Vec<u32> = outputs.iter().map(|(_, vr)| *vr).collect();
        let mut derivative = vec![0.0; vrs.len()];
        let status = unsafe {
            (fmu.api.get_real_output_derivatives)(
                inst.c,
                vrs.as_ptr(),
                vrs.len(),
                vec![1; vrs.len()].as_ptr(),
                derivative.as_mut_ptr(),
            )
        };
        assert_eq!(status, OK, "{name}: {}", inst.log_text());
        let mut y = vec![vec![0.0; vrs.len()]; 4];
        assert_eq!(inst.get_real(&vrs, &mut y[0]), OK);
        // Small enough for the transmission's oscillation (about 2000 rad/s: (2000 h)^2 / 3).
        let h = 1e-6;
        for (i, k) in [1usize, 2, 3].into_iter().enumerate() {
            on_ramp(t + i as f64 * h);
            assert_eq!(
                inst.do_step(t + i as f64 * h, h),
                OK,
                "{name}: {}",
                inst.log_text()
            );
            assert_eq!(inst.get_real(&vrs, &mut y[k]), OK);
        }
        let mut worst = 0.0f64;
        for (i, (n, _)) in outputs.iter().enumerate() {
            let difference =
                (-11.0 * y[0][i] + 18.0 * y[1][i] - 9.0 * y[2][i] + 2.0 * y[3][i]) / (6.0 * h);
            // The rate scale: the output's size over a second, or its rate, whichever is larger.
            let scale = derivative[i].abs().max(y[0][i].abs()).max(1e-3);
            worst = worst.max((derivative[i] - difference).abs() / scale);
            assert!(
                (derivative[i] - difference).abs() < 1e-5 * scale,
                "{name} (inputs ramping: {ramp}): d{n}/dt = {} by the FMU, {difference} by the \
                 outputs",
                derivative[i]
            );
        }
        eprintln!("{name} (inputs ramping: {ramp}): output derivatives within {worst:.1e} of their scales");
    }
}
