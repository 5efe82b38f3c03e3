//! Where the packaged FMUs and the component crates are, which models are under test, and whether
//! a packaged FMU is newer than its sources.

use super::*;

/// Where `cargo xtask package` writes the FMUs.
pub fn fmu_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/fmu")
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A component crate under `fmu/`: it builds a cdylib, and its Cargo.toml names the model
/// identifier of its FMU (`[package.metadata.fmu] model = "..."`).
pub struct ComponentCrate {
    pub crate_name: String,
    pub model: String,
}

/// The models the suite's every-FMU tests run: every component's, or only those named in
/// `FMU_MODELS` (comma-separated), which `cargo xtask mutants` sets for a mutant that reaches
/// only those FMUs.
pub fn models_under_test() -> Vec<String> {
    let models = components().unwrap_or_else(|e| panic!("{e}"));
    assert!(!models.is_empty(), "no component crate under fmu/");
    let only = std::env::var("FMU_MODELS").unwrap_or_default();
    models
        .into_iter()
        .map(|c| c.model)
        .filter(|m| only.is_empty() || only.split(',').any(|o| o == m))
        .collect()
}

/// Whether `FMU_MODELS` narrows the every-FMU tests to some models.
pub fn narrowed() -> bool {
    models_under_test().len() < components().map_or(0, |c| c.len())
}

/// Every component crate, by directory name.
pub fn components() -> Result<Vec<ComponentCrate>, String> {
    let dir = workspace().join("fmu");
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .collect();
    entries.sort_by_key(|e| e.file_name());
    let mut found = Vec::new();
    for entry in entries {
        let Ok(manifest) = std::fs::read_to_string(entry.path().join("Cargo.toml")) else {
            continue;
        };
        if !manifest.contains("\"cdylib\"") {
            continue;
        }
        let value = |key: &str| {
            manifest.lines().find_map(|l| {
                let v = l.trim().strip_prefix(key)?.trim_start().strip_prefix('=')?;
                Some(v.trim().strip_prefix('"')?.strip_suffix('"')?.to_string())
            })
        };
        let missing = |what: &str| format!("no {what} in {}", entry.path().display());
        found.push(ComponentCrate {
            crate_name: value("name").ok_or_else(|| missing("package name"))?,
            model: value("model").ok_or_else(|| missing("[package.metadata.fmu] model"))?,
        });
    }
    Ok(found)
}

/// The newest modification time of any file under `dirs` (recursively).
fn newest_file(dirs: &[PathBuf]) -> std::time::SystemTime {
    let mut newest = std::time::SystemTime::UNIX_EPOCH;
    let mut stack = dirs.to_vec();
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                stack.extend(entries.filter_map(|e| Some(e.ok()?.path())));
            }
        } else if let Ok(modified) = meta.modified() {
            newest = newest.max(modified);
        }
    }
    newest
}

/// An error unless `fmu` exists and is newer than every file under `sources`.
pub fn check_fresh(fmu: &Path, sources: &[PathBuf]) -> Result<(), String> {
    let packaged = std::fs::metadata(fmu)
        .and_then(|m| m.modified())
        .map_err(|e| format!("{}: {e} (run `cargo xtask package`)", fmu.display()))?;
    if packaged < newest_file(sources) {
        return Err(format!(
            "{} is older than its sources (run `cargo xtask package`)",
            fmu.display()
        ));
    }
    Ok(())
}

/// What every FMU is built from: a change anywhere here makes the packaged FMUs stale.
pub(crate) fn fmu_sources() -> Vec<PathBuf> {
    let root = workspace();
    ["fmu", "modelDescription", "Cargo.toml", "Cargo.lock"]
        .iter()
        .map(|p| root.join(p))
        .collect()
}
