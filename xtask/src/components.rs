//! The component crates, from `cargo metadata`: every workspace package that builds a cdylib
//! and names its FMU's model identifier in `[package.metadata.fmu] model`.

use crate::root;
use std::path::Path;
use std::process::Command;

/// A component crate: its package name and the model identifier of its FMU.
pub struct Component {
    pub crate_name: String,
    pub model: String,
}

/// Every component crate of the workspace, sorted by package name.
pub fn components() -> Result<Vec<Component>, String> {
    let metadata = metadata(&root())?;
    let mut found = Vec::new();
    for package in metadata["packages"].as_array().into_iter().flatten() {
        let cdylib = package["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| {
                t["crate_types"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|k| k == "cdylib")
            });
        if !cdylib {
            continue;
        }
        let name = package["name"].as_str().unwrap_or_default().to_string();
        let model = package["metadata"]["fmu"]["model"]
            .as_str()
            .ok_or_else(|| format!("{name}: no [package.metadata.fmu] model in its Cargo.toml"))?;
        found.push(Component {
            crate_name: name,
            model: model.to_string(),
        });
    }
    found.sort_by(|a, b| a.crate_name.cmp(&b.crate_name));
    Ok(found)
}

/// `cargo metadata` of the workspace at `dir`, without dependencies.
pub fn metadata(dir: &Path) -> Result<serde_json::Value, String> {
    let listed = crate::stages::stdout_of(
        Command::new(env!("CARGO"))
            .args(["metadata", "--format-version", "1", "--no-deps"])
            .current_dir(dir),
        "cargo metadata",
    )?;
    serde_json::from_slice(&listed).map_err(|e| format!("cargo metadata: {e}"))
}
