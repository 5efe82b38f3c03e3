//! ns per `fmi2DoStep`, per `fmi2SetReal`+`fmi2GetReal` round and the real-time factor of
//! every FMU given, through the C ABI (`cargo xtask bench` runs it and reports; nothing here
//! asserts a time).

use fmu_harness::{Fmu, OK};
use std::path::PathBuf;
use std::time::Instant;

const STEP: f64 = 1e-3;
const STEPS: usize = 100_000;
const ROUNDS: usize = 5;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() -> Result<(), String> {
    let fmus: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    println!(
        "| FMU | ns per fmi2DoStep (h = 1 ms) | ns per SetReal+GetReal round | real-time factor |"
    );
    println!("|---|---|---|---|");
    for path in fmus {
        let fmu = Fmu::load_path(&path)?;
        // Real inputs only: discrete ones (FastDrivetrain's gear) keep their start values.
        let inputs: Vec<u32> = variables(&fmu, model_description::Causality::Input)
            .into_iter()
            .filter(|vr| is_real(&fmu, *vr))
            .collect();
        let outputs: Vec<u32> = variables(&fmu, model_description::Causality::Output)
            .into_iter()
            .filter(|vr| is_real(&fmu, *vr))
            .collect();
        // Zero-mean sinusoidal inputs keep the motion bounded; a ratio input stays near 1.
        let ratio: Vec<bool> = inputs
            .iter()
            .map(|vr| {
                fmu.md
                    .model_variables
                    .iter()
                    .any(|v| v.value_reference == *vr && v.name == "r")
            })
            .collect();
        let signal = |t: f64, values: &mut [f64]| {
            for (j, v) in values.iter_mut().enumerate() {
                let u = (3.0 * t + j as f64).sin();
                *v = if ratio[j] { 1.0 + 0.5 * u } else { u };
            }
        };
        let mut values_in = vec![0.0; inputs.len()];
        let mut values_out = vec![0.0; outputs.len()];

        let (mut step_ns, mut io_ns, mut rtf) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let inst = fmu.instantiate("bench");
            // The tolerance of the model's DefaultExperiment, as an importer would use it.
            let tol = fmu.md.default_experiment.as_ref().map(|d| d.tolerance);
            if inst.setup_experiment(tol, 0.0, None) != OK
                || inst.enter_initialization_mode() != OK
                || inst.exit_initialization_mode() != OK
            {
                return Err(format!(
                    "{}: initialization failed: {}",
                    path.display(),
                    inst.log_text()
                ));
            }
            // A set/get round as a master does it every step.
            let t0 = Instant::now();
            for i in 0..STEPS {
                values_in.iter_mut().for_each(|v| *v = i as f64 * 1e-6);
                inst.set_real(&inputs, &values_in);
                inst.get_real(&outputs, &mut values_out);
            }
            io_ns.push(t0.elapsed().as_nanos() as f64 / STEPS as f64);
            // A co-simulation loop: set inputs, step, read outputs. The doSteps are also timed
            // alone.
            let t0 = Instant::now();
            let mut stepping = 0.0;
            for i in 0..STEPS {
                let t = i as f64 * STEP;
                signal(t, &mut values_in);
                inst.set_real(&inputs, &values_in);
                let ts = Instant::now();
                if inst.do_step(t, STEP) != OK {
                    return Err(format!(
                        "{}: doStep failed: {}",
                        path.display(),
                        inst.log_text()
                    ));
                }
                stepping += ts.elapsed().as_nanos() as f64;
                inst.get_real(&outputs, &mut values_out);
            }
            rtf.push(STEPS as f64 * STEP / t0.elapsed().as_secs_f64());
            step_ns.push(stepping / STEPS as f64);
        }
        println!(
            "| {} | {:.0} | {:.0} | {:.0} |",
            fmu.md.model_name,
            median(step_ns),
            median(io_ns),
            median(rtf)
        );
    }
    Ok(())
}

fn variables(fmu: &Fmu, causality: model_description::Causality) -> Vec<u32> {
    fmu.md
        .model_variables
        .iter()
        .filter(|v| v.causality == causality)
        .map(|v| v.value_reference)
        .collect()
}

fn is_real(fmu: &Fmu, vr: u32) -> bool {
    fmu.md.model_variables.iter().any(|v| {
        v.value_reference == vr && matches!(v.kind, model_description::VariableType::Real { .. })
    })
}
