//! The linear model of a packaged FMU at an operating point (`fmu_harness::linear`), as JSON:
//! what `cargo xtask linearize` runs, then draws the Bode plots from.
//!
//!     linearize <Model> <out.json> [--scenario NAME] [--at SECONDS]

use fmu_harness::linear::{modes, operating_point, Linear};
use fmu_harness::Fmu;
use serde_json::json;

/// Frequencies of the Bode data: log-spaced, a decade beyond the modes on either side (0.1 Hz
/// to 1 kHz where there are none).
const POINTS: usize = 400;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "linearize <Model> <out.json> [--scenario NAME] [--at SECONDS]";
    let (model, out) = match (args.first(), args.get(1)) {
        (Some(m), Some(o)) if !m.starts_with("--") => (m, o),
        _ => return Err(usage.into()),
    };
    let flag = |name: &str| {
        let at = args.iter().position(|a| a == name)?;
        args.get(at + 1).map(String::as_str)
    };
    let at = match flag("--at") {
        None => None,
        Some(s) => Some(s.parse::<f64>().map_err(|e| format!("--at {s}: {e}"))?),
    };
    let fmu = Fmu::load_fresh(model).map_err(|e| format!("{e} (cargo xtask package first)"))?;
    let (inst, time) = operating_point(&fmu, flag("--scenario"), at)?;
    let lin = Linear::exact(&fmu, &inst, time)?;
    println!(
        "{model} at t = {time} s: {} states, {} inputs, {} outputs",
        lin.states.len(),
        lin.inputs.len(),
        lin.outputs.len()
    );
    let eigenvalues = lin.eigenvalues();
    for (re, im) in &eigenvalues {
        println!("  eigenvalue {re:.6e} {im:+.6e}i");
    }
    let modes = modes(&eigenvalues);
    for m in &modes {
        println!(
            "  mode {:.6} Hz, damping ratio {:.6}",
            m.hz, m.damping_ratio
        );
    }
    let lo = modes.iter().fold(1.0f64, |a, m| a.min(m.hz)) / 10.0;
    let hi = modes.iter().fold(100.0f64, |a, m| a.max(m.hz)) * 10.0;
    let hz: Vec<f64> = (0..POINTS)
        .map(|k| lo * (hi / lo).powf(k as f64 / (POINTS - 1) as f64))
        .collect();
    let bode: Vec<_> = lin
        .declared_pairs(&fmu)
        .into_iter()
        .map(|(j, i)| {
            let h: Vec<_> = hz
                .iter()
                .map(|f| lin.response(i, j, *f).unwrap_or_default())
                .collect();
            json!({
                "input": lin.inputs[j],
                "output": lin.outputs[i],
                "magnitude_db": h.iter().map(|z| 20.0 * z.norm().log10()).collect::<Vec<_>>(),
                "phase_deg": h.iter().map(|z| z.arg().to_degrees()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let eigenvalues: Vec<[f64; 2]> = lin
        .eigenvalues()
        .iter()
        .map(|(re, im)| [*re, *im])
        .collect();
    let modes: Vec<_> = modes
        .iter()
        .map(|m| json!({"frequency_hz": m.hz, "damping_ratio": m.damping_ratio}))
        .collect();
    let doc = json!({
        "model": model,
        "time": lin.time,
        "states": lin.states,
        "inputs": lin.inputs,
        "outputs": lin.outputs,
        "x": lin.x,
        "u": lin.u,
        "A": lin.a,
        "B": lin.b,
        "C": lin.c,
        "D": lin.d,
        "eigenvalues": eigenvalues,
        "modes": modes,
        "bode": {"frequency_hz": hz, "pairs": bode},
    });
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    std::fs::write(out, text + "\n").map_err(|e| format!("{out}: {e}"))
}
