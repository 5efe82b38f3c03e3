//! `cargo xtask bench`: costs through the C ABI of every packaged FMU (no timing assertions
//! anywhere: this only reports). Nanoseconds per step come from the harness's `ns_per_step`
//! (`tests/src/bin`); instructions per step (callgrind, deterministic) and the work-precision
//! tables from `xtask/python/bench.py` through the C harness.

use std::process::Command;

pub fn bench(platforms: crate::Platforms) -> Result<(), String> {
    let fmus = crate::package::package(platforms, None)?;
    crate::run(
        Command::new(env!("CARGO"))
            .args([
                "run",
                "--release",
                "--quiet",
                "-p",
                "fmu-harness",
                "--bin",
                "ns_per_step",
                "--",
            ])
            .args(&fmus)
            .current_dir(crate::root()),
    )?;
    crate::valgrind()?;
    let harness = crate::platforms::harness()?;
    let root = crate::root();
    crate::run(
        Command::new(crate::venv()?)
            .arg(root.join("xtask/python/bench.py"))
            .arg(root.join("target/fmu"))
            .arg(root.join("reference-fmus"))
            .env("FMU_RUN_DIR", harness),
    )
}
