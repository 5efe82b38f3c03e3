//! A restored FMU state is checked like the calls that could have made it. States leave the
//! process (FMPy, Simulink and fmusim write them to files), and the checksum is public, so a
//! state is crafted here as a buggy tool or an attacker would: one value changed and the
//! checksum made right again. `fmi2DeSerializeFMUstate` (and `fmi2SetFMUstate`, which reads the
//! same bytes) must refuse it with fmi2Error and a log line naming the variable and the value,
//! leave the instance as it was, and the instance must step on.
//!
//! Crafted for every FMU: each parameter non-finite and outside its declared range, each
//! Integer (parameters, inputs, modes, counts, indices) outside its range and not an integer,
//! each continuous state non-finite, and per model the states whose parameters break an
//! initialization rule, whose calculated parameters do not follow from the parameters, or
//! whose modes and counts are ones the model cannot reach.

use fmu_harness::state_bytes::{crafted, value};
use fmu_harness::{Fmu, Instance, ERROR, OK};
use model_description::{Causality, ModelDescription, Variability, VariableType};

/// A crafted state: what it is, the values changed, and the variable the refusal must name.
struct Case {
    what: String,
    changes: Vec<(u32, f64)>,
    names: String,
}

fn vr(md: &ModelDescription, name: &str) -> u32 {
    md.model_variables
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("{}: no variable {name}", md.model_name))
        .value_reference
}

fn case(md: &ModelDescription, changes: &[(&str, f64)], names: &str) -> Case {
    Case {
        what: changes
            .iter()
            .map(|(n, x)| format!("{n} = {x}"))
            .collect::<Vec<_>>()
            .join(", "),
        changes: changes.iter().map(|(n, x)| (vr(md, n), *x)).collect(),
        names: names.to_string(),
    }
}

/// Each parameter non-finite and outside its range; each Integer outside its range and not an
/// integer; each continuous state non-finite.
fn generic_cases(md: &ModelDescription) -> Vec<Case> {
    let mut cases = vec![];
    let states: Vec<usize> = md
        .model_variables
        .iter()
        .filter_map(|v| match v.kind {
            VariableType::Real {
                derivative: Some(s),
                ..
            } => Some(s),
            _ => None,
        })
        .collect();
    for (i, v) in md.model_variables.iter().enumerate() {
        let name = v.name.as_str();
        let parameter = matches!(
            v.causality,
            Causality::Parameter | Causality::CalculatedParameter
        ) && v.variability != Variability::Constant;
        let (integer, min, max) = match &v.kind {
            VariableType::Real { min, max, .. } => (false, *min, *max),
            VariableType::Integer { min, max, .. } => {
                (true, min.map(f64::from), max.map(f64::from))
            }
            VariableType::Boolean { .. } => continue,
        };
        let mut values = vec![];
        if integer {
            values.push(0.5);
        } else if parameter || states.contains(&(i + 1)) {
            values.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY]);
        }
        if parameter || integer {
            values.extend(min.map(|m| m - m.abs().max(1.0)));
            values.extend(max.map(|m| m + m.abs().max(1.0)));
        }
        for x in values {
            cases.push(case(md, &[(name, x)], name));
        }
    }
    cases
}

/// The states a model refuses for its own rules, and the cases the issue found accepted.
fn model_cases(md: &ModelDescription, bytes: &[u8]) -> Vec<Case> {
    let at = |name: &str| value(bytes, vr(md, name));
    let c = |changes: &[(&str, f64)], names: &str| case(md, changes, names);
    match md.model_name.as_str() {
        "Gear" => vec![c(&[("J_a", -1.0)], "J_a")],
        "LossyGear" => vec![
            c(&[("J_a", -1.0)], "J_a"),
            c(&[("mode", 1e6)], "mode"),
            // Free needs an ideal table; a segment beyond the one row in use; stuck but turning.
            c(&[("mode", 2.0)], "mode"),
            c(&[("segment", 3.0)], "segment"),
            c(&[("mode", 0.0), ("w_b", 5.0)], "w_b"),
            // Breakpoints that do not increase.
            c(
                &[("nLossRows", 2.0), ("lossTable[2,1]", 0.0)],
                "lossTable[2,1]",
            ),
        ],
        "CrankSlider" => vec![
            c(&[("crank_radius", -1.0)], "crank_radius"),
            c(&[("rod_length", 0.5 * at("crank_radius"))], "rod_length"),
            c(&[("dead_centre_count", -5.0)], "dead_centre_count"),
            c(
                &[("side", 0.0), ("dead_centre_count", 3.0)],
                "dead_centre_count",
            ),
        ],
        "CVT" => vec![
            c(&[("sheave_mode", 5.0)], "sheave_mode"),
            // Held on the upper stop while the sheave is elsewhere.
            c(&[("sheave_mode", 1.0)], "s2"),
            // A belt shorter than the pulleys' centre distance allows.
            c(&[("C", 0.01)], "C"),
            // s2_lo does not follow from the limits it holds.
            c(&[("s2_lo", at("s2_lo") - 1e-3)], "s2_lo"),
        ],
        "VariableRatioCoupling" | "VariableRatioTransmission" => {
            let mut cases = vec![
                c(&[("k_p", f64::NAN)], "k_p"),
                c(&[("k_p", -1.0)], "k_p"),
                c(&[("direction", 51.0)], "direction"),
                c(&[("losses", 51.0)], "losses"),
                c(&[("power_flow", 51.0)], "power_flow"),
                c(&[("power_flow", 0.0)], "power_flow"),
            ];
            if md.model_name == "VariableRatioTransmission" {
                cases.push(c(&[("J_B", -1.0)], "J_B"));
            }
            cases
        }
        "FastDrivetrain" => vec![
            c(&[("nShafts", 58.0)], "nShafts"),
            c(&[("nGears", 58.0)], "nGears"),
            c(&[("iCrank", 58.0)], "iCrank"),
            c(&[("iSprocket", 58.0)], "iSprocket"),
            c(&[("m[1]", -1.0)], "m[1]"),
            c(&[("m[1]", f64::NAN)], "m[1]"),
            c(&[("gear_engaged", 1e6)], "gear_engaged"),
            // A spin inertia no solid of revolution has.
            c(&[("Jyy[1]", 3.0 * at("Jxx[1]"))], "Jyy[1]"),
            // A gear beyond nGears engaged; another gear's reduction held.
            c(&[("gear_engaged", 7.0)], "gear_engaged"),
            c(&[("gamma", 1.1 * at("gamma"))], "gamma"),
            // A calculated parameter that does not follow from the shafts.
            c(&[("alpha", 2.0 * at("alpha"))], "alpha"),
        ],
        "ChainDrive" => vec![
            c(&[("J_ds", -1.0)], "J_ds"),
            c(&[("chain_model", 53.0)], "chain_model"),
            c(&[("chain_mode", 7.0)], "chain_mode"),
            // Both runs taut outside the full model; impacts outside the inextensible one.
            c(&[("chain_model", 2.0), ("chain_mode", 2.0)], "chain_mode"),
            c(&[("impact_count", 3.0)], "impact_count"),
            c(&[("I_sa", 2.0 * at("I_sa"))], "I_sa"),
            // Sprockets that overlap.
            c(&[("r_ws", 1.0)], "r_ws"),
        ],
        other => panic!("{other}: add its model cases to restored_states.rs"),
    }
}

/// The instance's state, serialized.
fn state_of(inst: &Instance) -> Vec<u8> {
    let (status, s) = inst.get_state();
    assert_eq!(status, OK, "{}", inst.log_text());
    let bytes = inst.serialize(&s).expect("serialize");
    assert_eq!(inst.free_state(s), OK);
    bytes
}

/// Refused with fmi2Error, the reason naming the variable and the value, nothing changed.
fn assert_refused(inst: &Instance, bytes: &[u8], c: &Case) {
    let model = &inst.fmu.md.model_name;
    let before = state_of(inst);
    inst.clear_log();
    let (status, s) = inst.deserialize(bytes);
    let log = inst.log_text();
    assert_eq!(
        status, ERROR,
        "{model}: a state with {} was accepted",
        c.what
    );
    assert!(
        s.0.is_null(),
        "{model}: {}: a state handle despite the error",
        c.what
    );
    assert!(
        log.contains("refused") && log.contains(&c.names),
        "{model}: {}: the reason does not name {}: {log}",
        c.what,
        c.names
    );
    assert_eq!(
        state_of(inst),
        before,
        "{model}: {}: the instance changed",
        c.what
    );
}

/// A Co-Simulation instance after `steps` steps of 1 ms from the start values.
fn stepped(fmu: &Fmu, steps: usize) -> Instance<'_> {
    let inst = fmu.instantiate("restore");
    inst.initialize(0.0, None, &[]);
    for k in 0..steps {
        assert_eq!(
            inst.do_step(k as f64 * 1e-3, 1e-3),
            OK,
            "{}",
            inst.log_text()
        );
    }
    inst
}

#[test]
fn a_crafted_state_is_refused_like_the_set_calls_that_could_have_made_it() {
    let mut tried = 0;
    for fmu in Fmu::all() {
        let md = &fmu.md;
        let inst = stepped(&fmu, 50);
        let bytes = state_of(&inst);
        let cases: Vec<Case> = generic_cases(md)
            .into_iter()
            .chain(model_cases(md, &bytes))
            .collect();
        for c in &cases {
            assert_refused(&inst, &crafted(&bytes, &c.changes), c);
        }
        tried += cases.len();
        // The instance steps on, its outputs finite.
        for k in 50..60 {
            assert_eq!(
                inst.do_step(k as f64 * 1e-3, 1e-3),
                OK,
                "{}",
                inst.log_text()
            );
        }
        for v in md
            .model_variables
            .iter()
            .filter(|v| v.causality == Causality::Output)
        {
            if matches!(v.kind, VariableType::Real { .. }) {
                let x = inst.real(&v.name);
                assert!(x.is_finite(), "{}: {} = {x}", md.model_name, v.name);
            }
        }
    }
    eprintln!("{tried} crafted states refused");
}

/// The same on a Model Exchange instance in Continuous-Time Mode, for the parameters.
#[test]
fn a_crafted_model_exchange_state_is_refused() {
    for fmu in Fmu::all() {
        let md = &fmu.md;
        let inst = fmu.instantiate_me("restore");
        inst.initialize(0.0, None, &[]);
        assert_eq!(inst.event_iteration().0, OK);
        assert_eq!(inst.enter_continuous_time_mode(), OK);
        let bytes = state_of(&inst);
        for c in model_cases(md, &bytes) {
            assert_refused(&inst, &crafted(&bytes, &c.changes), &c);
        }
        let (status, dx) = inst.derivatives();
        assert_eq!(status, OK);
        assert!(dx.iter().all(|d| d.is_finite()), "{}", md.model_name);
    }
}

/// The checks refuse no state the FMU itself writes: at the start, after events, on both
/// interfaces, unchanged states restore and give the same continuation.
#[test]
fn the_states_the_fmu_writes_are_accepted() {
    for fmu in Fmu::all() {
        for steps in [0, 10, 300] {
            let inst = stepped(&fmu, steps);
            let bytes = state_of(&inst);
            let (status, s) = inst.deserialize(&bytes);
            assert_eq!(
                status,
                OK,
                "{} after {steps} steps: {}",
                fmu.md.model_name,
                inst.log_text()
            );
            assert_eq!(inst.set_state(&s), OK, "{}", inst.log_text());
            assert_eq!(inst.free_state(s), OK);
            assert_eq!(state_of(&inst), bytes);
        }
        let inst = fmu.instantiate_me("restore");
        inst.initialize(0.0, None, &[]);
        assert_eq!(inst.event_iteration().0, OK);
        let bytes = state_of(&inst);
        let (status, s) = inst.deserialize(&bytes);
        assert_eq!(status, OK, "{}: {}", fmu.md.model_name, inst.log_text());
        assert_eq!(inst.free_state(s), OK);
    }
}
