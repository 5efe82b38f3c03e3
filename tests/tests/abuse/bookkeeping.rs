//! How the suite's tests run and what they leave: one at a time, and a record of what passed.

use super::*;

/// The tests of this file run one at a time: the memory test reads the process's heap
/// statistics, which another test allocating at the same time would disturb.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub(crate) fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Records that a test of this file passed on every FMU, and what it did, so that
/// docs/validation.md (written by `cargo xtask validate`) lists what ran rather than what
/// should have.
pub(crate) fn passed(test: &str, what: String) {
    // A record says the test passed on every FMU: none from a run narrowed by FMU_MODELS.
    if narrowed() {
        return;
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/abuse-results");
    let mode = if memcheck() { "memcheck" } else { "native" };
    let models: Vec<String> = Fmu::all().iter().map(|f| f.md.model_name.clone()).collect();
    std::fs::create_dir_all(&dir).expect("target/abuse-results");
    std::fs::write(
        dir.join(format!("{test}.{mode}.txt")),
        format!("{what}\n{}\n", models.join(", ")),
    )
    .expect("write the test's record");
}
