//! Stage 2: the mutants stage 1 missed, against the packaged FMUs (linux64) and the
//! packaged-FMU suite.

use super::stage1::stamp_of;
use super::{sync_tree, Mutant, Outcome, STAGE2};
use crate::{components::components, root, run};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

/// The mutants stage 1 missed, against the packaged FMUs (linux64).
pub(super) fn stage2(
    tree: &Path,
    dependents: &BTreeMap<String, Vec<String>>,
    results: &mut BTreeMap<String, Vec<(Mutant, Outcome)>>,
    keep: bool,
    deadline: Option<Instant>,
) -> Result<(), String> {
    let missed = results
        .values()
        .flatten()
        .filter(|(_, o)| *o == Outcome::Missed)
        .count();
    if missed == 0 {
        return Ok(());
    }
    let models: BTreeMap<String, String> = components()?
        .into_iter()
        .map(|c| (c.crate_name, c.model))
        .collect();
    let mut packaged_all = false;
    // Sources older than every FMU: the suite refuses an FMU older than any file under fmu/, and
    // a mutated file (or one restored since) is newer than the FMUs it did not reach. (An hour
    // before the FMUs packaged first, below.)
    let before = SystemTime::now() - Duration::from_secs(3600);
    let mut touched = BTreeSet::new();
    // The cheapest crates first: a runtime mutant packages every FMU.
    let mut order: Vec<(&String, &mut Vec<(Mutant, Outcome)>)> = results.iter_mut().collect();
    order.sort_by_key(|(p, _)| (dependents[*p].len(), (*p).clone()));
    for (package, outcomes) in order {
        let reached: Vec<&String> = dependents[package]
            .iter()
            .filter_map(|p| models.get(p))
            .collect();
        let missed: Vec<Mutant> = outcomes
            .iter()
            .filter(|(_, o)| *o == Outcome::Missed)
            .map(|(m, _)| m.clone())
            .collect();
        if missed.is_empty() {
            continue;
        }
        let record = tree.join("../out").join(package).join("stage2");
        let stamp = format!("{RECORD} {}", stamp_of(tree, STAGE2, &missed));
        let judged: BTreeMap<String, Outcome> = match std::fs::read_to_string(&record) {
            Ok(text) if keep || text.lines().next() == Some(stamp.as_str()) => {
                eprintln!("xtask: mutants: stage 2 of {package}: from the run on these sources");
                text.lines().skip(1).filter_map(read_judged).collect()
            }
            _ if deadline.is_some_and(|d| Instant::now() > d) => {
                eprintln!("xtask: mutants: stage 2 of {package}: not run, the budget is spent");
                for (_, outcome) in outcomes.iter_mut() {
                    if *outcome == Outcome::Missed {
                        *outcome = Outcome::NotPackaged;
                    }
                }
                continue;
            }
            _ => {
                let mut attempt = || {
                    if !packaged_all {
                        xtask(tree, &["package", "--host-only"])?;
                        baseline(tree, &models.values().collect::<Vec<_>>())?;
                        packaged_all = true;
                    }
                    packaged(tree, &missed, &reached, before, &mut touched)
                };
                let judged = match attempt() {
                    Err(e) if e.contains(crate::stages::STOPPED) => {
                        eprintln!(
                            "xtask: mutants: stage 2 of {package}: stopped, the budget is spent"
                        );
                        sync_tree(&root())?;
                        for (_, outcome) in outcomes.iter_mut() {
                            if *outcome == Outcome::Missed {
                                *outcome = Outcome::NotPackaged;
                            }
                        }
                        continue;
                    }
                    other => other?,
                };
                let text = std::iter::once(stamp.clone())
                    .chain(judged.iter().map(|(name, o)| format!("{o:?} {name}")))
                    .collect::<Vec<_>>()
                    .join("\n");
                std::fs::write(&record, text).map_err(|e| e.to_string())?;
                judged
            }
        };
        for (m, outcome) in outcomes.iter_mut() {
            if let Some(o) = judged.get(&m.name) {
                *outcome = *o;
            }
        }
    }
    // Newer than every build again, so that the next run rebuilds what the mutants left.
    backdate(&touched, SystemTime::now())
}

/// The first line of a stage 2 record: its format, then the stamp of what it judged.
const RECORD: &str = "stage2-v2";

/// A line of a stage 2 record: an outcome (`CaughtPackaged`, `Unjudged`, `Timeout`) and a
/// mutant's name.
fn read_judged(line: &str) -> Option<(String, Outcome)> {
    let (outcome, name) = line.split_once(' ')?;
    let outcome = match outcome {
        "CaughtPackaged" => Outcome::CaughtPackaged,
        "Unjudged" => Outcome::Unjudged,
        "Timeout" => Outcome::Timeout,
        _ => return None,
    };
    Some((name.to_string(), outcome))
}

/// How long one mutant's packaging and suite may take (both take about three minutes here
/// together): past it, the mutant is a timeout, as in stage 1.
const MUTANT_LIMIT: Duration = Duration::from_secs(15 * 60);

/// The packaged-FMU suite on the unmutated tree copy, every model's FMUs packaged: it must
/// pass, or no mutant's failure there would tell anything.
fn baseline(tree: &Path, models: &[&String]) -> Result<(), String> {
    eprintln!("xtask: mutants: stage 2: the baseline, the suite on the unmutated tree copy");
    match packaged_suite(tree, models)? {
        Verdict::Passed => Ok(()),
        v => Err(format!(
            "mutants: the packaged-FMU suite fails in the tree copy before any mutation ({v:?}; its output is in the log above): no mutant of stage 2 can be judged"
        )),
    }
}

/// What the packaged suite makes of each of `missed` that it does not pass (caught, not
/// judged, a timeout), each applied in turn to the tree copy, the FMUs it `reached`
/// packaged, the suite run, the source restored.
fn packaged(
    tree: &Path,
    missed: &[Mutant],
    reached: &[&String],
    before: SystemTime,
    touched: &mut BTreeSet<PathBuf>,
) -> Result<BTreeMap<String, Outcome>, String> {
    let mut judged = BTreeMap::new();
    for m in missed {
        let file = tree.join(&m.file);
        let original = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
        std::fs::write(&file, apply(&original, &m.diff)?).map_err(|e| e.to_string())?;
        touched.insert(file.clone());
        let budget = crate::stages::deadline();
        let limit = Instant::now() + MUTANT_LIMIT;
        let suite = crate::stages::within(budget.map_or(limit, |b| b.min(limit)), || {
            package_models(tree, reached).and_then(|()| {
                backdate(touched, before)?;
                eprintln!("xtask: mutants: stage 2: {}", m.name);
                packaged_suite(tree, reached)
            })
        });
        std::fs::write(&file, &original).map_err(|e| e.to_string())?;
        let verdict = match suite {
            // Past its own limit, not the budget's: a timeout.
            Err(e)
                if e.contains(crate::stages::STOPPED)
                    && budget.is_none_or(|b| Instant::now() < b) =>
            {
                eprintln!(
                    "xtask: mutants: stage 2: {}: past {MUTANT_LIMIT:?}, a timeout",
                    m.name
                );
                judged.insert(m.name.clone(), Outcome::Timeout);
                continue;
            }
            other => other?,
        };
        match verdict {
            Verdict::Failed => {
                judged.insert(m.name.clone(), Outcome::CaughtPackaged);
            }
            Verdict::Passed => {}
            Verdict::Broken => {
                eprintln!(
                    "xtask: mutants: stage 2: {}: the suite failed without a test failing (see the log above): not judged",
                    m.name
                );
                judged.insert(m.name.clone(), Outcome::Unjudged);
            }
        }
    }
    // The restored sources, packaged again, so that the next crate's FMUs are the truth.
    package_models(tree, reached)?;
    backdate(touched, before)?;
    Ok(judged)
}

fn package_models(tree: &Path, models: &[&String]) -> Result<(), String> {
    if models.len() > 1 {
        return xtask(tree, &["package", "--host-only"]);
    }
    for model in models {
        xtask(tree, &["package", "--host-only", "--only", model])?;
    }
    Ok(())
}

fn backdate(files: &BTreeSet<PathBuf>, to: SystemTime) -> Result<(), String> {
    for file in files {
        std::fs::File::options()
            .write(true)
            .open(file)
            .and_then(|f| f.set_modified(to))
            .map_err(|e| format!("{}: {e}", file.display()))?;
    }
    Ok(())
}

/// Cargo in the tree copy, its release profile built for turnaround (several code-generation
/// units, incremental): a mutant rebuilds one crate in seconds. The FMUs' results do not depend
/// on it (no fast-math; docs/result-hashes.txt).
fn cargo(tree: &Path) -> Command {
    let mut command = Command::new(env!("CARGO"));
    command
        .current_dir(tree)
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16")
        .env("CARGO_PROFILE_RELEASE_INCREMENTAL", "true");
    command
}

fn xtask(tree: &Path, args: &[&str]) -> Result<(), String> {
    run(cargo(tree).arg("xtask").args(args))
}

/// What the packaged-FMU suite made of a mutant.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Passed,
    /// A test failed: the mutant is caught.
    Failed,
    /// The suite failed otherwise (a build error, an FMU it refuses as older than its
    /// sources): no test judged the mutant, so it is not caught.
    Broken,
}

/// The packaged-FMU suite in the tree copy, its every-FMU tests on `models`, within the stage's
/// deadline and with its output in the job's log.
fn packaged_suite(tree: &Path, models: &[&String]) -> Result<Verdict, String> {
    let models: Vec<&str> = models.iter().map(|m| m.as_str()).collect();
    let (status, output) = crate::stages::status_and_output(
        cargo(tree)
            .args(["test", "--release", "-p", "fmu-harness", "--quiet"])
            .env("FMU_MODELS", models.join(",")),
    )?;
    Ok(verdict(status.success(), &output))
}

/// A run caught the mutant only if one of its tests failed, and not because an FMU was refused.
fn verdict(success: bool, output: &str) -> Verdict {
    if success {
        Verdict::Passed
    } else if output.contains("test result: FAILED") && !output.contains("older than its sources") {
        Verdict::Failed
    } else {
        Verdict::Broken
    }
}

#[cfg(test)]
#[test]
fn a_record_reads_back_what_was_judged() {
    for o in [Outcome::CaughtPackaged, Outcome::Unjudged, Outcome::Timeout] {
        let name = "fmu/gear/src/lib.rs:3:5: replace * with / in Gear::f";
        assert_eq!(
            read_judged(&format!("{o:?} {name}")),
            Some((name.to_string(), o))
        );
    }
    assert_eq!(read_judged("Missed x"), None);
}

#[cfg(test)]
#[test]
fn only_a_failed_test_catches_a_mutant() {
    assert_eq!(verdict(true, "test result: ok."), Verdict::Passed);
    let failed = "test gear ... FAILED\ntest result: FAILED. 3 passed; 1 failed";
    assert_eq!(verdict(false, failed), Verdict::Failed);
    let build = "error[E0308]: mismatched types\nerror: could not compile `fmu-runtime`";
    assert_eq!(verdict(false, build), Verdict::Broken);
    let refused = "panicked: target/fmu/Gear.fmu is older than its sources\ntest result: FAILED.";
    assert_eq!(verdict(false, refused), Verdict::Broken);
}

/// `original` with cargo-mutants' one-hunk `diff` applied: the hunk's context and removed lines,
/// found once, replaced by its context and added lines.
pub(super) fn apply(original: &str, diff: &str) -> Result<String, String> {
    let (mut old, mut new) = (String::new(), String::new());
    for line in diff.lines().skip_while(|l| !l.starts_with("@@")).skip(1) {
        if let Some(l) = line.strip_prefix('-') {
            old += l;
            old.push('\n');
        } else if let Some(l) = line.strip_prefix('+') {
            new += l;
            new.push('\n');
        } else {
            let l = line.strip_prefix(' ').unwrap_or(line);
            for s in [&mut old, &mut new] {
                *s += l;
                s.push('\n');
            }
        }
    }
    match original.matches(old.as_str()).count() {
        1 => Ok(original.replacen(old.as_str(), &new, 1)),
        n => Err(format!("a mutant's hunk matches {n} places:\n{diff}")),
    }
}
