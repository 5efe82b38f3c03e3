//! Stage 1: cargo-mutants on the mutants of a crate, in place in the tree copy, with the
//! in-process tests of the crate and of every `fmu/` crate that depends on it.

use super::{regex_escape, sync_tree, Mutant, Outcome, STAGE1};
use crate::root;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// cargo-mutants on `mutants` of `package`, in place in the tree copy, with the tests of `tests`.
pub(super) fn stage1(
    tool: &Path,
    tree: &Path,
    package: &str,
    tests: &[String],
    mutants: &[Mutant],
    keep: bool,
) -> Result<Vec<(Mutant, Outcome)>, String> {
    if mutants.is_empty() {
        return Ok(Vec::new());
    }
    let out = tree.join("../out").join(package);
    let stamp = out.join("stamp");
    if keep
        || std::fs::read_to_string(&stamp).ok().as_deref()
            == Some(stamp_of(tree, STAGE1, mutants).as_str())
    {
        if let Ok(outcomes) = read_outcomes(&out, package, mutants) {
            eprintln!("xtask: mutants: stage 1 of {package}: from the run on these sources");
            return Ok(outcomes);
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let mut command = stage1_command(tool, tree, package, tests, mutants, &out);
    eprintln!(
        "xtask: mutants: stage 1: {} mutant(s) of {package}, tests of {}",
        mutants.len(),
        tests.join(", ")
    );
    // Exit status 2 (missed mutants) and 3 (timeouts) are results, read from outcomes.json; 4
    // is the baseline failing: the tree copy's tests fail before any mutation, and no mutant
    // run can tell anything.
    let status = crate::stages::status(&mut command)?;
    if status.code() == Some(BASELINE_FAILED) {
        return Err(baseline_failed(tests, &out));
    }
    let outcomes = read_outcomes(&out, package, mutants)
        .map_err(|e| format!("{e} (cargo mutants: {status})"))?;
    std::fs::write(&stamp, stamp_of(tree, STAGE1, mutants)).map_err(|e| e.to_string())?;
    Ok(outcomes)
}

/// cargo-mutants' exit status when the tests fail on the unmutated tree.
pub(super) const BASELINE_FAILED: i32 = 4;

/// The error of a baseline that failed: no mutant run can tell anything.
fn baseline_failed(tests: &[String], out: &Path) -> String {
    format!(
        "mutants: the tests of {} fail in the tree copy before any mutation (cargo mutants' baseline; its log: {})",
        tests.join(", "),
        out.join("mutants.out/log").display()
    )
}

/// cargo-mutants on `mutants` of `package` in place in the tree copy, with the tests of `tests`,
/// its results in `out`: a baseline run of the tests first, on the unmutated tree.
pub(super) fn stage1_command(
    tool: &Path,
    tree: &Path,
    package: &str,
    tests: &[String],
    mutants: &[Mutant],
    out: &Path,
) -> Command {
    let mut command = Command::new(tool);
    command
        .args(["mutants", "--in-place", "--no-shuffle"])
        .args(["--timeout", "300", "--build-timeout", "900"])
        .args(["--package", package])
        .arg("--test-package")
        .arg(tests.join(","))
        .arg("--output")
        .arg(out)
        .current_dir(tree);
    for m in mutants {
        command
            .arg("--re")
            .arg(format!("^{}$", regex_escape(&m.name)));
    }
    command
}

/// `mutants` in the order that tells most early: one mutant of each changed function before a
/// second of any, and within a function the changed operators and match arms before the whole
/// body replaced by a value (which nearly every test catches, so it tells least).
pub(super) fn informative_order(mutants: Vec<Mutant>) -> Vec<Mutant> {
    let mut by_function: BTreeMap<(String, String), Vec<Mutant>> = BTreeMap::new();
    for m in mutants {
        by_function
            .entry((m.file.clone(), m.function.clone()))
            .or_default()
            .push(m);
    }
    let mut groups: Vec<std::vec::IntoIter<Mutant>> = by_function
        .into_values()
        .map(|mut group| {
            group.sort_by_key(|m| m.genre == "FnValue");
            group.into_iter()
        })
        .collect();
    let mut order = Vec::new();
    loop {
        let before = order.len();
        order.extend(groups.iter_mut().filter_map(Iterator::next));
        if order.len() == before {
            return order;
        }
    }
}

/// Stage 1 of one mutant (`--budget`), stopped if it runs past `deadline`: then `Untested`.
/// Its outcome is kept per mutant, so a rerun on the same sources reuses it. The first mutant
/// tested with a set of tests runs their baseline (a failing one fails the run, naming its
/// log); the others skip it (`passed`: the sets whose baseline passed).
pub(super) fn stage1_before(
    tool: &Path,
    tree: &Path,
    tests: &[String],
    m: &Mutant,
    keep: bool,
    deadline: Instant,
    passed: &mut BTreeSet<Vec<String>>,
) -> Result<Outcome, String> {
    let out = tree
        .join("../out/one")
        .join(stamp_of(tree, &[], std::slice::from_ref(m)));
    let stamp = out.join("stamp");
    let one = std::slice::from_ref(m);
    if keep
        || std::fs::read_to_string(&stamp).ok().as_deref()
            == Some(stamp_of(tree, STAGE1, one).as_str())
    {
        if let Ok(outcomes) = read_outcomes(&out, &m.package, one) {
            return Ok(outcomes[0].1);
        }
    }
    if Instant::now() >= deadline {
        return Ok(Outcome::Untested);
    }
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let mut command = stage1_command(tool, tree, &m.package, tests, one, &out);
    let baseline = !passed.contains(tests);
    if !baseline {
        command.args(["--baseline", "skip"]);
    }
    eprintln!("xtask: mutants: stage 1: {}", m.name);
    let status = match crate::stages::within(deadline, || crate::stages::status(&mut command)) {
        Err(e) if e.contains(crate::stages::STOPPED) => {
            // Stopped mid-mutant: cargo-mutants mutates in place, so put the sources back.
            sync_tree(&root())?;
            return Ok(Outcome::Untested);
        }
        other => other?,
    };
    if status.code() == Some(BASELINE_FAILED) {
        return Err(baseline_failed(tests, &out));
    }
    if baseline {
        passed.insert(tests.to_vec());
    }
    let outcomes = read_outcomes(&out, &m.package, one)
        .map_err(|e| format!("{e} (cargo mutants: {status})"))?;
    std::fs::write(&stamp, stamp_of(tree, STAGE1, one)).map_err(|e| e.to_string())?;
    Ok(outcomes[0].1)
}

/// What a stage's result depends on: the files under `dirs` of the tree copy (stage 1: fmu/
/// and the lock file; stage 2: tests/ too) and the mutants chosen. A rerun on the same ones
/// reuses the result.
pub(super) fn stamp_of(tree: &Path, dirs: &[&str], mutants: &[Mutant]) -> String {
    use std::hash::{Hash, Hasher};
    let mut files = Vec::new();
    let mut stack: Vec<PathBuf> = dirs.iter().map(|d| tree.join(d)).collect();
    while let Some(path) = stack.pop() {
        match std::fs::read_dir(&path) {
            Ok(entries) => stack.extend(entries.filter_map(|e| Some(e.ok()?.path()))),
            Err(_) => files.push(path),
        }
    }
    files.sort();
    // SipHash with its fixed default keys: the same on every run.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for file in files {
        file.hash(&mut hasher);
        std::fs::read(&file).unwrap_or_default().hash(&mut hasher);
    }
    for m in mutants {
        m.name.hash(&mut hasher);
    }
    format!("{:016x}", hasher.finish())
}

pub(super) fn read_outcomes(
    out: &Path,
    package: &str,
    mutants: &[Mutant],
) -> Result<Vec<(Mutant, Outcome)>, String> {
    let outcomes = out.join("mutants.out/outcomes.json");
    let json: serde_json::Value = std::fs::read(&outcomes)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| format!("cargo mutants on {package} wrote no outcomes"))?;
    let mut by_name: BTreeMap<&str, Outcome> = BTreeMap::new();
    for o in json["outcomes"].as_array().into_iter().flatten() {
        let Some(name) = o["scenario"]["Mutant"]["name"].as_str() else {
            continue;
        };
        let outcome = match o["summary"].as_str().unwrap_or_default() {
            "CaughtMutant" => Outcome::Caught,
            "MissedMutant" => Outcome::Missed,
            "Timeout" => Outcome::Timeout,
            "Unviable" => Outcome::Unviable,
            other => return Err(format!("{name}: unexpected outcome {other}")),
        };
        by_name.insert(name, outcome);
    }
    mutants
        .iter()
        .map(|m| {
            by_name
                .get(m.name.as_str())
                .map(|o| (m.clone(), *o))
                .ok_or_else(|| format!("cargo mutants did not test {}", m.name))
        })
        .collect()
}
