//! `cargo xtask linearize <Model> [--scenario NAME] [--at SECONDS]`: the FMU's linear model at an
//! operating point from its own directional derivatives, computed by the harness's `linearize`
//! (`tests/src/bin/linearize.rs`, `fmu_harness::linear`) into `target/linear/<Model>.json`
//! with its eigenvalues, modes and Bode data; this draws a Bode plot of each input-output pair
//! the FMU declares a dependency for.

use crate::{root, run, svg};
use serde_json::Value;
use std::process::Command;

pub fn linearize(args: &[String]) -> Result<(), String> {
    let usage = "usage: cargo xtask linearize <Model> [--scenario NAME] [--at SECONDS]";
    let model = args.get(1).filter(|m| !m.starts_with("--")).ok_or(usage)?;
    let out = root().join("target/linear");
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let json = out.join(format!("{model}.json"));
    run(Command::new(env!("CARGO"))
        .args([
            "run",
            "--release",
            "--quiet",
            "--locked",
            "-p",
            "fmu-harness",
        ])
        .args(["--bin", "linearize", "--"])
        .arg(model)
        .arg(&json)
        .args(&args[2..])
        .current_dir(root()))?;
    let text = std::fs::read_to_string(&json).map_err(|e| format!("{}: {e}", json.display()))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let numbers = |v: &Value| -> Vec<f64> {
        v.as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default()
    };
    let log_hz: Vec<f64> = numbers(&doc["bode"]["frequency_hz"])
        .iter()
        .map(|f| f.log10())
        .collect();
    let pairs = doc["bode"]["pairs"].as_array().cloned().unwrap_or_default();
    for pair in &pairs {
        let (input, output) = (
            pair["input"].as_str().unwrap_or("?"),
            pair["output"].as_str().unwrap_or("?"),
        );
        let (magnitude, phase) = (numbers(&pair["magnitude_db"]), numbers(&pair["phase_deg"]));
        let (m, p) = (
            format!("{output} / {input} magnitude"),
            format!("{output} / {input} phase"),
        );
        let figure = svg::figure_over(
            &log_hz,
            "log10 frequency [Hz]",
            &[
                svg::Series {
                    name: &m,
                    unit: "dB",
                    values: &magnitude,
                },
                svg::Series {
                    name: &p,
                    unit: "deg",
                    values: &phase,
                },
            ],
        );
        let path = out.join(format!("{model}-{input}-{output}.svg"));
        std::fs::write(&path, figure).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    println!(
        "xtask: wrote {} and {} Bode plots beside it",
        json.display(),
        pairs.len()
    );
    Ok(())
}
