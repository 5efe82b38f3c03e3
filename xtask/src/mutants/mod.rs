//! `cargo xtask mutants`: how much of `fmu/` can break without a test noticing, measured with
//! cargo-mutants.
//!
//! Stage 1: cargo-mutants mutates a copy of the workspace (`target/mutants/tree`) in place and
//! runs, for a mutant in crate P, the tests of P and of every `fmu/` crate that depends on P
//! (debug build, models in-process: seconds per mutant). Stage 2: a mutant that stage 1 missed is
//! applied again, the FMUs it reaches are packaged (linux64) and the packaged-FMU suite
//! (`cargo test --release -p fmu-harness`) runs; a failed test there catches it. Each stage
//! runs its tests on the unmutated tree copy first (its baseline): if they fail there, the run
//! fails. A mutant for which the suite fails without a test failing (an FMU refused, say) is
//! not judged, and neither caught nor missed; one whose packaging and suite take over
//! [`stage2`]'s limit is a timeout. A mutant missed by both stages is either killed by a new
//! test or argued equivalent in `xtask/mutants-equivalent.txt`. In diff mode the report also
//! names each changed function no test judged a mutant of, with why (none listed, not drawn,
//! untested within the budget, ...).
//!
//! The whole set does not fit on two cores in one sitting, so the full run draws at most
//! `--sample N` mutants per crate with a fixed `--seed`, and gives each crate's score
//! caught / (caught + missed) with a 95 % interval. `--diff REV` tests every mutant in the lines
//! changed since REV instead (`--diff landed`: since the last commit CI passed on, named in
//! `xtask/mutants-base.txt`, what a submission's note reports; at most `--sample` per crate
//! there too) and fails on a mutant missed and not argued equivalent. It is not a stage of the
//! test command: on CI's two cores its install and first build alone took the 6 minutes it had
//! there, so it tested nothing (docs/test-command.md).

mod report;
mod stage1;
mod stage2;

use crate::{root, run};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const CARGO_MUTANTS_VERSION: &str = "27.1.0";

/// What each stage's result depends on (`stamp_of`).
const STAGE1: &[&str] = &["fmu", "vendor", "Cargo.lock"];
const STAGE2: &[&str] = &["fmu", "tests", "vendor", "Cargo.lock"];

/// One mutant, as `cargo mutants --list --json` names it.
#[derive(Clone)]
struct Mutant {
    name: String,
    package: String,
    file: String,
    diff: String,
    /// The function it is in, and what it changes (`FnValue`: the whole body replaced).
    function: String,
    genre: String,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Outcome {
    Caught,
    /// Caught only by the packaged-FMU suite.
    CaughtPackaged,
    Missed,
    /// Missed in-process; the packaged-FMU suite was not run on it (`--budget` spent).
    NotPackaged,
    /// Not tested: `--budget` was spent before its turn.
    Untested,
    Equivalent,
    Timeout,
    Unviable,
    /// The packaged-FMU suite failed without a test failing (an FMU it refused, say): no test
    /// judged the mutant, so it is neither caught nor missed, and a diff run fails on it.
    Unjudged,
}

struct Options {
    sample: usize,
    seed: u64,
    diff: Option<String>,
    crates: Vec<String>,
    /// Every crate's earlier outcomes reused even if the sources changed since: to assemble
    /// the table after rerunning some crates (`--crate`) on new tests.
    keep: bool,
    /// Minutes for the whole run, from its start (installing cargo-mutants and building
    /// included). Stage 1 then tests one mutant at a time in `informative_order`, and stops
    /// one at the deadline; stage 2 goes crate by crate from the cheapest (fewest FMUs to
    /// package). What the budget did not reach is listed as untested (and in diff mode does
    /// not fail the run: the test command's time must not depend on the size of a change).
    budget: Option<u64>,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        sample: 40,
        seed: 2026,
        diff: None,
        crates: Vec::new(),
        keep: false,
        budget: None,
    };
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| format!("mutants: {a} needs a value"))
        };
        match a.as_str() {
            "--sample" => o.sample = value()?.parse().map_err(|e| format!("--sample: {e}"))?,
            "--seed" => o.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            // `landed`: since the last commit CI passed on.
            "--diff" => {
                o.diff = Some(match value()? {
                    rev if rev == "landed" => submission_base(&root()),
                    rev => rev,
                })
            }
            "--crate" => o.crates.push(value()?),
            "--keep" => o.keep = true,
            "--budget" => o.budget = Some(value()?.parse().map_err(|e| format!("--budget: {e}"))?),
            other => return Err(format!("mutants: unknown argument {other}")),
        }
    }
    Ok(o)
}

pub fn mutants(args: &[String]) -> Result<(), String> {
    let o = options(args)?;
    let deadline = o
        .budget
        .map(|m| Instant::now() + Duration::from_secs(60 * m));
    let root = root();
    let diff_file = match &o.diff {
        Some(rev) => Some(write_diff(&root, rev)?),
        None => None,
    };
    if diff_file
        .as_ref()
        .is_some_and(|d| std::fs::metadata(d).is_ok_and(|m| m.len() == 0))
    {
        eprintln!(
            "xtask: mutants: nothing under fmu/ changed since {:?}",
            o.diff
        );
        return Ok(());
    }
    let tool = cargo_mutants()?;
    let tree = sync_tree(&root)?;
    let mut all = list(&tool, &tree, diff_file.as_deref())?;
    all.retain(|m| m.file.starts_with("fmu/"));
    let equivalent = equivalent_mutants(&root)?;
    let mut by_crate: BTreeMap<String, Vec<Mutant>> = BTreeMap::new();
    for m in all {
        by_crate.entry(m.package.clone()).or_default().push(m);
    }
    let dependents = dependents(&tree)?;
    let mut results: BTreeMap<String, Vec<(Mutant, Outcome)>> = BTreeMap::new();
    let mut queue = Vec::new();
    let mut rng = SplitMix(o.seed);
    for (package, mutants) in &by_crate {
        // Every crate draws in turn, so that `--crate` tests the sample of the whole run. The
        // mutants of a change are taken in the order that tells most (one of each changed
        // function before a second of any), not drawn: a function left out is left out last.
        let drawn = sample(mutants, o.sample, &mut rng);
        let chosen = match o.diff {
            Some(_) => stage1::informative_order(mutants.clone())
                .into_iter()
                .take(o.sample)
                .collect(),
            None => drawn,
        };
        if !o.crates.is_empty() && !o.crates.contains(package) {
            continue;
        }
        let (argued, tested): (Vec<Mutant>, Vec<Mutant>) = chosen
            .into_iter()
            .partition(|m| equivalent.contains(&m.name));
        let outcomes = results.entry(package.clone()).or_default();
        outcomes.extend(argued.into_iter().map(|m| (m, Outcome::Equivalent)));
        if deadline.is_some() {
            queue.extend(tested);
        } else {
            let tests = dependents.get(package).cloned().unwrap_or_default();
            outcomes.extend(stage1::stage1(
                &tool, &tree, package, &tests, &tested, o.keep,
            )?);
        }
    }
    if let Some(deadline) = deadline {
        let mut passed = BTreeSet::new();
        for m in stage1::informative_order(queue) {
            let tests = dependents.get(&m.package).cloned().unwrap_or_default();
            let outcome =
                stage1::stage1_before(&tool, &tree, &tests, &m, o.keep, deadline, &mut passed)?;
            results
                .entry(m.package.clone())
                .or_default()
                .push((m, outcome));
        }
    }
    let stage2 = match deadline {
        Some(d) => crate::stages::within(d, || {
            stage2::stage2(&tree, &dependents, &mut results, o.keep, deadline)
        }),
        None => stage2::stage2(&tree, &dependents, &mut results, o.keep, deadline),
    };
    match stage2 {
        // Stopped at the deadline between packages (a `cargo metadata`, say): what stage 2
        // had not judged yet is untested.
        Err(e) if e.contains(crate::stages::STOPPED) => {
            sync_tree(&root)?;
            for (_, outcome) in results.values_mut().flatten() {
                if *outcome == Outcome::Missed {
                    *outcome = Outcome::NotPackaged;
                }
            }
        }
        other => other?,
    }
    let changed = match &diff_file {
        Some(d) => Some(changed_functions(
            &std::fs::read_to_string(d).map_err(|e| e.to_string())?,
        )),
        None => None,
    };
    let report = report::report(&results, &by_crate, changed.as_ref(), &o);
    std::fs::write(root.join("target/mutants/report.md"), &report).map_err(|e| e.to_string())?;
    println!("{report}");
    if o.diff.is_none() && o.crates.is_empty() {
        std::fs::write(root.join("docs/mutation.md"), &report).map_err(|e| e.to_string())?;
    }
    let untested: Vec<String> = results
        .values()
        .flatten()
        .filter(|(_, o)| matches!(o, Outcome::Untested | Outcome::NotPackaged))
        .map(|(m, o)| match o {
            Outcome::NotPackaged => format!("{} (missed in-process, not packaged)", m.name),
            _ => m.name.clone(),
        })
        .collect();
    let listed = root.join("target/mutants/untested.txt");
    std::fs::write(&listed, untested.join("\n")).map_err(|e| e.to_string())?;
    if !untested.is_empty() {
        let tested = results.values().flatten().count() - untested.len();
        crate::stages::note(format!(
            "{} mutant(s) untested within the budget, {tested} tested (target/mutants/untested.txt)",
            untested.len()
        ));
    }
    // In diff mode a missed mutant fails the run, and so does one no test could judge; one
    // the budget left untested is listed.
    let failing = |k: &dyn Fn(Outcome) -> bool| -> Vec<&str> {
        let all = results.values().flatten();
        all.filter(|(_, o)| k(*o))
            .map(|(m, _)| m.name.as_str())
            .collect()
    };
    let missed =
        failing(&|o| o == Outcome::Missed || (o == Outcome::NotPackaged && deadline.is_none()));
    let unjudged = failing(&|o| o == Outcome::Unjudged);
    if o.diff.is_some() && !(missed.is_empty() && unjudged.is_empty()) {
        return Err(format!(
            "mutants: {} mutant(s) of the changed lines survive every test (kill them with a test \
             of the behaviour, or argue them equivalent in xtask/mutants-equivalent.txt):\n{}\n\
             {} mutant(s) no test judged (the packaged suite failed without a test failing):\n{}",
            missed.len(),
            missed.join("\n"),
            unjudged.len(),
            unjudged.join("\n")
        ));
    }
    Ok(())
}

/// The commit this submission started from: `xtask/mutants-base.txt` names the last commit CI
/// passed on (updated when a submission lands); `HEAD~1` if that commit is not in the clone.
fn submission_base(root: &Path) -> String {
    let named = std::fs::read_to_string(root.join("xtask/mutants-base.txt"))
        .ok()
        .and_then(|t| {
            t.lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_string)
        });
    let known = |rev: &str| {
        Command::new("git")
            .args(["cat-file", "-e", &format!("{rev}^{{commit}}")])
            .current_dir(root)
            .status()
            .is_ok_and(|s| s.success())
    };
    match named {
        Some(rev) if known(&rev) => rev,
        _ => "HEAD~1".to_string(),
    }
}

/// `target/tools/bin/cargo-mutants`, installed on first use.
fn cargo_mutants() -> Result<PathBuf, String> {
    let tools = root().join("target/tools");
    let exe = tools.join("bin/cargo-mutants");
    let installed = Command::new(&exe)
        .args(["mutants", "--version"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(CARGO_MUTANTS_VERSION));
    if !installed {
        run(crate::tool_install()
            .args(["cargo-mutants", "--locked", "--version"])
            .arg(CARGO_MUTANTS_VERSION)
            .arg("--root")
            .arg(&tools))?;
    }
    Ok(exe)
}

/// `target/mutants/tree`: the workspace's tracked and new files, copied where they differ (so
/// that its own target directory builds incrementally from one run to the next).
fn sync_tree(root: &Path) -> Result<PathBuf, String> {
    let tree = root.join("target/mutants/tree");
    for file in crate::links::project_files(root)? {
        let (from, to) = (root.join(&file), tree.join(&file));
        let Ok(content) = std::fs::read(&from) else {
            continue; // deleted in the work tree
        };
        if std::fs::read(&to).ok().as_ref() != Some(&content) {
            std::fs::create_dir_all(to.parent().expect("a file has a parent"))
                .map_err(|e| e.to_string())?;
            std::fs::write(&to, &content).map_err(|e| format!("{}: {e}", to.display()))?;
        }
    }
    // Python's packages (and cargo-zigbuild, which packages) are the workspace's.
    let venv = tree.join(".venv");
    if !venv.exists() {
        std::os::unix::fs::symlink(root.join(".venv"), &venv)
            .map_err(|e| format!("{}: {e}", venv.display()))?;
    }
    Ok(tree)
}

fn write_diff(root: &Path, rev: &str) -> Result<PathBuf, String> {
    // Git's Rust driver names the function each hunk is in, in the hunk's header.
    let attributes = root.join("target/mutants/rust.gitattributes");
    std::fs::create_dir_all(attributes.parent().expect("parent")).map_err(|e| e.to_string())?;
    std::fs::write(&attributes, "*.rs diff=rust\n").map_err(|e| e.to_string())?;
    let diff = crate::stages::stdout_of(
        Command::new("git")
            .arg("-c")
            .arg(format!("core.attributesFile={}", attributes.display()))
            .args(["diff", "--no-ext-diff", rev, "--", "fmu"])
            .current_dir(root),
        &format!("git diff {rev}"),
    )?;
    let path = root.join("target/mutants/changes.diff");
    std::fs::create_dir_all(path.parent().expect("parent")).map_err(|e| e.to_string())?;
    std::fs::write(&path, diff).map_err(|e| e.to_string())?;
    Ok(path)
}

fn list(tool: &Path, tree: &Path, diff: Option<&Path>) -> Result<Vec<Mutant>, String> {
    let mut command = Command::new(tool);
    command
        .args(["mutants", "--list", "--json", "--workspace"])
        .current_dir(tree);
    if let Some(diff) = diff {
        command.arg("--in-diff").arg(diff);
    }
    let listed = crate::stages::stdout_of(&mut command, "cargo mutants --list")?;
    // A diff that touches no mutable code (only tests, say) lists nothing, not even `[]`.
    if listed.iter().all(u8::is_ascii_whitespace) {
        return Ok(Vec::new());
    }
    let json: serde_json::Value =
        serde_json::from_slice(&listed).map_err(|e| format!("cargo mutants --list: {e}"))?;
    let field = |m: &serde_json::Value, k: &str| m[k].as_str().unwrap_or_default().to_string();
    Ok(json
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| Mutant {
            name: field(m, "name"),
            package: field(m, "package"),
            file: field(m, "file"),
            diff: field(m, "diff"),
            function: m["function"]["function_name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            genre: field(m, "genre"),
        })
        .collect())
}

/// The functions a diff changes, by file: those its hunks are in (named in their headers) and
/// those it adds or edits a signature of.
fn changed_functions(diff: &str) -> BTreeSet<(String, String)> {
    let name_after_fn = |line: &str| {
        let rest = line.split_once("fn ")?.1;
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        (!name.is_empty()).then_some(name)
    };
    let (mut file, mut changed) = (String::new(), BTreeSet::new());
    for line in diff.lines() {
        if let Some(path) = line.strip_prefix("+++ b/") {
            file = path.to_string();
        } else if let Some(header) = line.strip_prefix("@@") {
            let context = header.split_once("@@").map_or("", |(_, c)| c);
            changed.extend(name_after_fn(context).map(|f| (file.clone(), f)));
        } else if line.starts_with('+') || line.starts_with('-') {
            changed.extend(name_after_fn(line).map(|f| (file.clone(), f)));
        }
    }
    changed
}

/// `xtask/mutants-equivalent.txt`: the names of mutants argued equivalent (each after a `#`
/// comment saying why). A name carries its line and column, so an edit above it makes the
/// argument go stale and the mutant come back as missed, to be looked at again.
fn equivalent_mutants(root: &Path) -> Result<BTreeSet<String>, String> {
    let path = root.join("xtask/mutants-equivalent.txt");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect())
}

/// For every `fmu/` crate, the `fmu/` crates whose tests guard it: itself and every crate that
/// depends on it, directly or not.
fn dependents(tree: &Path) -> Result<BTreeMap<String, Vec<String>>, String> {
    let metadata = crate::components::metadata(tree)?;
    let fmu_dir = tree.join("fmu");
    let mut uses: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in metadata["packages"].as_array().into_iter().flatten() {
        let manifest = PathBuf::from(p["manifest_path"].as_str().unwrap_or_default());
        if !manifest.starts_with(&fmu_dir) {
            continue;
        }
        let deps = p["dependencies"].as_array().into_iter().flatten();
        uses.insert(
            p["name"].as_str().unwrap_or_default().to_string(),
            deps.filter_map(|d| d["name"].as_str().map(str::to_string))
                .collect(),
        );
    }
    let mut guarded = BTreeMap::new();
    for package in uses.keys() {
        let mut set = BTreeSet::from([package.clone()]);
        loop {
            let more: Vec<String> = uses
                .iter()
                .filter(|(p, deps)| !set.contains(*p) && deps.iter().any(|d| set.contains(d)))
                .map(|(p, _)| p.clone())
                .collect();
            if more.is_empty() {
                break;
            }
            set.extend(more);
        }
        guarded.insert(package.clone(), set.into_iter().collect());
    }
    Ok(guarded)
}

/// At most `n` of `mutants`, drawn without replacement, in their listed order.
fn sample(mutants: &[Mutant], n: usize, rng: &mut SplitMix) -> Vec<Mutant> {
    let mut index: Vec<usize> = (0..mutants.len()).collect();
    let n = n.min(index.len());
    for i in 0..n {
        let j = i + (rng.next() % (index.len() - i) as u64) as usize;
        index.swap(i, j);
    }
    let mut chosen = index[..n].to_vec();
    chosen.sort_unstable();
    chosen.into_iter().map(|i| mutants[i].clone()).collect()
}

/// SplitMix64: a fixed seed draws the same sample on every machine.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The characters the regex crate (cargo-mutants' filters) treats as syntax.
fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::report::interval;
    use super::stage1::informative_order;
    use super::stage2::apply;
    use super::*;

    fn mutant(file: &str, function: &str, genre: &str, name: &str) -> Mutant {
        Mutant {
            name: name.to_string(),
            package: "p".to_string(),
            file: file.to_string(),
            diff: String::new(),
            function: function.to_string(),
            genre: genre.to_string(),
        }
    }

    #[test]
    fn every_changed_function_gets_a_mutant_before_any_gets_a_second() {
        let listed = vec![
            mutant("a.rs", "f", "FnValue", "f body"),
            mutant("a.rs", "f", "BinaryOperator", "f op 1"),
            mutant("a.rs", "f", "BinaryOperator", "f op 2"),
            mutant("a.rs", "g", "FnValue", "g body"),
            mutant("b.rs", "f", "UnaryOperator", "b f op"),
        ];
        let order: Vec<String> = informative_order(listed)
            .into_iter()
            .map(|m| m.name)
            .collect();
        assert_eq!(order, ["f op 1", "g body", "b f op", "f op 2", "f body"]);
    }

    #[test]
    fn a_hunk_is_applied_where_it_matches() {
        let diff = "--- f.rs\n+++ replace\n@@ -1,3 +1,3 @@\n a\n-b * c\n+b / c\n d\n";
        assert_eq!(apply("x\na\nb * c\nd\n", diff).unwrap(), "x\na\nb / c\nd\n");
        assert!(apply("a\nb + c\nd\n", diff).is_err());
    }

    #[test]
    fn the_interval_narrows_to_the_score_when_every_mutant_is_tested() {
        let (lo, hi) = interval(36, 40, 40);
        assert!((lo - 0.9).abs() < 1e-12 && (hi - 0.9).abs() < 1e-12);
        let (lo, hi) = interval(36, 40, 4000);
        assert!(lo < 0.8 && hi > 0.95, "{lo} {hi}");
    }

    #[test]
    fn the_changed_functions_are_read_from_the_diff() {
        let diff = "+++ b/fmu/runtime/src/abi.rs\n@@ -21,6 +21,7 @@ pub(crate) unsafe fn at_once<M: Model>(\n-    old\n+    new\n+++ b/fmu/gear/src/lib.rs\n@@ -1,2 +1,4 @@\n+fn added(x: f64) -> f64 {\n";
        let changed: Vec<(String, String)> = changed_functions(diff).into_iter().collect();
        let named = |f: &str, n: &str| (f.to_string(), n.to_string());
        assert_eq!(
            changed,
            [
                named("fmu/gear/src/lib.rs", "added"),
                named("fmu/runtime/src/abi.rs", "at_once")
            ]
        );
    }

    #[test]
    fn regex_syntax_is_escaped() {
        assert_eq!(regex_escape("a.b(c)-> f64"), "a\\.b\\(c\\)\\-> f64");
    }
}
