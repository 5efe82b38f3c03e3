//! What importers do differently, replayed on every packaged FMU through the C ABI. Each case
//! is one that a real importer does (see the importer notes in docs/importers.md); the FMU must
//! give the same results whichever way it is driven.

use fmu_harness::{Fmu, Instance, OK};
use model_description::{Causality, ScalarVariable, VariableType};

fn is_real(v: &ScalarVariable) -> bool {
    matches!(v.kind, VariableType::Real { .. })
}

fn start(fmu: &Fmu, name: &str) -> f64 {
    match fmu.md.variable(name).map(|v| &v.kind) {
        Some(VariableType::Real { start: Some(x), .. }) => *x,
        _ => panic!("{name} has no Real start value"),
    }
}

const H: f64 = 1e-3;
const STEPS: usize = 200;

/// Sets every Real input to a small smooth signal (a ratio input stays near 1) and returns the
/// bits of every output after each step. `no_prior` is doStep's noSetFMUStatePriorToCurrentPoint.
fn run(inst: &Instance, no_prior: i32) -> Vec<u64> {
    let md = &inst.fmu.md;
    let inputs: Vec<(&str, bool)> = md
        .model_variables
        .iter()
        .filter(|v| v.causality == Causality::Input && is_real(v))
        .map(|v| (v.name.as_str(), v.name == "r"))
        .collect();
    let outputs: Vec<u32> = md
        .model_variables
        .iter()
        .filter(|v| v.causality == Causality::Output && is_real(v))
        .map(|v| v.value_reference)
        .collect();
    let mut values = vec![0.0; outputs.len()];
    let mut bits = Vec::new();
    for k in 0..STEPS {
        let t = k as f64 * H;
        for (i, (name, ratio)) in inputs.iter().enumerate() {
            let u = 0.2 * (5.0 * t + i as f64).sin();
            assert_eq!(inst.set(name, if *ratio { 1.0 + u } else { u }), OK);
        }
        let status = unsafe { (inst.fmu.api.do_step)(inst.c, t, H, no_prior) };
        assert_eq!(status, OK, "{}", inst.log_text());
        assert_eq!(inst.get_real(&outputs, &mut values), OK);
        bits.extend(values.iter().map(|v| v.to_bits()));
    }
    bits
}

fn started<'a>(fmu: &'a Fmu, tolerance: Option<f64>, stop: Option<f64>) -> Instance<'a> {
    let inst = fmu.instantiate("importer");
    assert_eq!(inst.setup_experiment(tolerance, 0.0, stop), OK);
    assert_eq!(inst.enter_initialization_mode(), OK);
    assert_eq!(inst.exit_initialization_mode(), OK);
    inst
}

/// OSP libcosim defines no tolerance: the FMU then integrates at its DefaultExperiment's
/// tolerance, exactly as if that tolerance had been passed.
#[test]
fn an_undefined_tolerance_is_the_default_experiments() {
    for fmu in Fmu::all() {
        let tol = fmu.md.default_experiment.as_ref().unwrap().tolerance;
        let undefined = run(&started(&fmu, None, None), 1);
        assert_eq!(
            undefined,
            run(&started(&fmu, Some(tol), None), 1),
            "{}",
            fmu.md.model_name
        );
    }
    // The tolerance does reach the integrator: the transmission's 338 Hz mode shows it.
    let fmu = Fmu::load("VariableRatioTransmission");
    assert_ne!(
        run(&started(&fmu, None, None), 1),
        run(&started(&fmu, Some(1e-6), None), 1)
    );
}

/// FMPy and fmi-sim pass noSetFMUStatePriorToCurrentPoint = true, others false; a stop time may
/// be defined or not. None of it changes a result.
#[test]
fn step_flags_and_stop_time_do_not_change_results() {
    for fmu in Fmu::all() {
        let name = &fmu.md.model_name;
        let reference = run(&started(&fmu, None, None), 1);
        assert_eq!(reference, run(&started(&fmu, None, None), 0), "{name}");
        let stop = STEPS as f64 * H;
        assert_eq!(
            reference,
            run(&started(&fmu, None, Some(stop)), 1),
            "{name}"
        );
    }
}

/// libcosim and fmucontainer set start values of inputs before fmi2SetupExperiment, and
/// fmucontainer sets inputs again in initialization mode; the values set last count.
#[test]
fn inputs_set_before_and_during_initialization_count() {
    let fmu = Fmu::load("Gear");
    let inst = fmu.instantiate("early");
    assert_eq!(inst.set("tau_a", 3.0), OK);
    assert_eq!(inst.setup_experiment(None, 0.0, None), OK);
    assert_eq!(inst.enter_initialization_mode(), OK);
    assert_eq!(inst.set("tau_b", -1.0), OK);
    assert_eq!(inst.exit_initialization_mode(), OK);
    let (a_a, a_b) = (inst.real("a_a"), inst.real("a_b"));
    assert_eq!(inst.do_step(0.0, H), OK);
    // (J_b + ratio^2 J_a) a_b = tau_b + ratio tau_a, and a_a = ratio a_b.
    let (ratio, j_a, j_b) = (start(&fmu, "ratio"), start(&fmu, "J_a"), start(&fmu, "J_b"));
    let expected_b = (-1.0 + ratio * 3.0) / (j_b + ratio * ratio * j_a);
    assert!(
        (a_b - expected_b).abs() < 1e-12,
        "a_b = {a_b}, expected {expected_b}"
    );
    assert!((a_a - ratio * expected_b).abs() < 1e-12);
    assert!((inst.real("w_b") - expected_b * H).abs() < 1e-12);
}

/// Every reference scenario of `reference-fmus/<Model>/` ships inside the packaged FMU, in the
/// FMI-LS-REF folder: the default one at the top, each further one (a subfolder with options)
/// in a subfolder of the same name, the files byte for byte (all but the interpolated-input
/// reference, which the layout has no role for), each an `<Experiment>` of the manifest.
#[test]
fn every_reference_scenario_ships_inside_its_fmu() {
    let refs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../reference-fmus");
    let ls = "extra/org.fmi-standard.fmi-ls-ref";
    for fmu in Fmu::all() {
        let model = fmu.md.co_simulation.model_identifier.clone();
        let manifest = std::fs::read_to_string(fmu.unpacked().join(ls).join("fmi-ls-manifest.xml"))
            .unwrap_or_else(|e| panic!("{model}: {e}"));
        let mut scenarios = vec![("default".to_string(), refs.join(&model))];
        for entry in std::fs::read_dir(refs.join(&model)).unwrap() {
            let path = entry.unwrap().path();
            if path.join(format!("{model}_ref.opt")).is_file() {
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                scenarios.push((name, path));
            }
        }
        for (name, dir) in &scenarios {
            assert!(
                manifest.contains(&format!("<Experiment name=\"{name}\"")),
                "{model}: no experiment {name} in the manifest"
            );
            let inside = if name == "default" {
                fmu.unpacked().join(ls)
            } else {
                fmu.unpacked().join(ls).join(name)
            };
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                let file = path.file_name().unwrap().to_string_lossy().into_owned();
                if path.is_dir() || file.ends_with("_ref_interpolated.csv") {
                    continue;
                }
                let shipped = std::fs::read(inside.join(&file))
                    .unwrap_or_else(|e| panic!("{model} {name}: {file} not in the FMU: {e}"));
                assert!(
                    shipped == std::fs::read(&path).unwrap(),
                    "{model} {name}: {file} differs from reference-fmus"
                );
            }
        }
        assert_eq!(
            manifest.matches("<Experiment ").count(),
            scenarios.len(),
            "{model}: experiments in the manifest"
        );
    }
}
