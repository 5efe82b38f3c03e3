//! FMI 3.0 intermediate variables on a stiff model, through the C ABI of the packaged FMU: the
//! ChainDrive with a stiff, heavily damped chain (k = 1e6 N/m, c = 1e6 N.s/m), integrated by
//! BDF. With its inputs required and nothing set at the intermediate updates, the run is the
//! run without intermediate variables bit for bit (the BDF goes on across each pause with its order,
//! history and step size), in about as many internal steps. A BDF restarted at every pause
//! takes its first-step estimate each time: over 10,000 internal steps per 10 ms step, and the
//! step fails.

use fmu_harness::fmi3::Fmu3;
use fmu_harness::{Fmu, OK};
use model_description::{Causality, Variability, VariableType};

const STEP: f64 = 0.01;
const STEPS: usize = 50;

/// The outputs after every step, and the callbacks made; the run restarted at every pause
/// (`Instance3::restart_at_every_pause`) if `restart`. Err: the first step that failed.
fn run(
    fmu3: &Fmu3,
    fmu2: &Fmu,
    required: &[u32],
    restart: bool,
) -> Result<(Vec<Vec<f64>>, usize), String> {
    let inst = fmu3
        .with_intermediate(false, false, required, true)
        .unwrap_or_else(|log| panic!("{log}"));
    if restart {
        inst.restart_at_every_pause(required.to_vec());
    }
    assert_eq!(inst.set_int("chain_model", 1), OK);
    assert_eq!(inst.set("k_chain", 1e6), OK);
    assert_eq!(inst.set("c_chain", 1e6), OK);
    assert_eq!(
        inst.enter_initialization_mode(Some(1e-8), 0.0, STEP * STEPS as f64),
        OK
    );
    assert_eq!(inst.set("tau_eng", 20.0), OK);
    assert_eq!(inst.set("tau_load", -5.0), OK);
    assert_eq!(inst.exit_initialization_mode(), OK, "{}", inst.log_text());
    let outputs: Vec<u32> = fmu2
        .md
        .model_variables
        .iter()
        .filter(|v| v.causality == Causality::Output)
        .filter(|v| matches!(v.kind, VariableType::Real { .. }))
        .map(|v| v.value_reference)
        .collect();
    let mut rows = vec![];
    for k in 0..STEPS {
        // The importer sets its inputs at every communication point, to the same values.
        assert_eq!(inst.set("tau_eng", 20.0), OK);
        let step = inst.do_step(k as f64 * STEP, STEP);
        if step.status != OK {
            return Err(format!("step {k}: {}", inst.log_text()));
        }
        let (s, v) = inst.get(&outputs);
        assert_eq!(s, OK);
        rows.push(v);
    }
    let callbacks = inst.env.updates.lock().unwrap().len();
    Ok((rows, callbacks))
}

fn continuous_inputs(fmu2: &Fmu) -> Vec<u32> {
    fmu2.md
        .model_variables
        .iter()
        .filter(|v| v.causality == Causality::Input && v.variability == Variability::Continuous)
        .map(|v| v.value_reference)
        .collect()
}

#[test]
fn a_stiff_model_with_its_inputs_required_runs_as_without() {
    let (fmu2, fmu3) = (Fmu::load("ChainDrive"), Fmu3::load("ChainDrive"));
    let inputs = continuous_inputs(&fmu2);
    let (held, _) = run(&fmu3, &fmu2, &[], false).unwrap();
    let (required, callbacks) = run(&fmu3, &fmu2, &inputs, false).unwrap();
    let mut worst = 0.0f64;
    for (a, b) in held.iter().zip(&required) {
        for (x, y) in a.iter().zip(b) {
            worst = worst.max((x - y).abs() / x.abs().max(1.0));
        }
    }
    eprintln!("ChainDrive, stiff chain: {callbacks} intermediate updates in {STEPS} steps; required but unset {worst:.1e} from held");
    assert!(worst == 0.0, "required but unset: {worst:.1e} from held");
    assert!(
        callbacks < 40 * STEPS,
        "{callbacks} intermediate updates (internal steps) in {STEPS} steps"
    );
}

/// The fault the test above guards against, kept as a test: restarted at every pause, the
/// BDF starts over from its first-step estimate at each one, and the run fails or takes far
/// more internal steps than the bound above allows.
#[test]
fn restarted_at_every_pause_the_stiff_run_breaks_the_bound() {
    let (fmu2, fmu3) = (Fmu::load("ChainDrive"), Fmu3::load("ChainDrive"));
    let inputs = continuous_inputs(&fmu2);
    match run(&fmu3, &fmu2, &inputs, true) {
        Err(failed) => eprintln!("restarted at every pause: {}", failed.lines().last().unwrap_or("")),
        Ok((_, callbacks)) => assert!(
            callbacks >= 40 * STEPS,
            "restarted at every pause, the run still took {callbacks} internal steps in {STEPS} steps"
        ),
    }
}
