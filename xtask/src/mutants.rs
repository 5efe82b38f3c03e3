//! `cargo xtask mutants`: how much of `fmu/` can break without a test noticing, measured with
//! cargo-mutants.
//!
//! Stage 1: cargo-mutants mutates a copy of the workspace (`target/mutants/tree`) in place and
//! runs, for a mutant in crate P, the tests of P and of every `fmu/` crate that depends on P
//! (debug build, models in-process: seconds per mutant). Stage 2: a mutant that stage 1 missed is
//! applied again, the FMUs it reaches are packaged (linux64) and the packaged-FMU suite
//! (`cargo test --release -p fmu-harness`) runs; a failure there catches it. A mutant missed by
//! both is either killed by a new test or argued equivalent in `xtask/mutants-equivalent.txt`.
//!
//! The whole set does not fit on two cores in one sitting, so the full run draws at most
//! `--sample N` mutants per crate with a fixed `--seed`, and gives each crate's score
//! caught / (caught + missed) with a 95 % interval. `--diff REV` tests every mutant in the lines
//! changed since REV instead (the test command: since the commit in `xtask/mutants-base.txt`;
//! at most `--sample` per crate there too) and fails on a mutant missed and not argued
//! equivalent.

use crate::{components::components, root, run};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

const CARGO_MUTANTS_VERSION: &str = "27.1.0";
/// What each stage's result depends on (`stamp_of`).
const STAGE1: &[&str] = &["fmu", "Cargo.lock"];
const STAGE2: &[&str] = &["fmu", "tests", "Cargo.lock"];

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
            "--diff" => o.diff = Some(value()?),
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
    let population: BTreeMap<String, usize> =
        by_crate.iter().map(|(k, v)| (k.clone(), v.len())).collect();
    let dependents = dependents(&tree)?;
    let mut results: BTreeMap<String, Vec<(Mutant, Outcome)>> = BTreeMap::new();
    let mut queue = Vec::new();
    let mut rng = SplitMix(o.seed);
    for (package, mutants) in &by_crate {
        // A change of hundreds of lines is sampled too, to stay inside CI's time. Every crate
        // draws in turn, so that `--crate` tests the sample of the whole run.
        let chosen = sample(mutants, o.sample, &mut rng);
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
            outcomes.extend(stage1(&tool, &tree, package, &tests, &tested, o.keep)?);
        }
    }
    if let Some(deadline) = deadline {
        for m in informative_order(queue) {
            let tests = dependents.get(&m.package).cloned().unwrap_or_default();
            let outcome = stage1_before(&tool, &tree, &tests, &m, o.keep, deadline)?;
            results
                .entry(m.package.clone())
                .or_default()
                .push((m, outcome));
        }
    }
    match deadline {
        Some(d) => crate::stages::within(d, || {
            stage2(&tree, &dependents, &mut results, o.keep, deadline)
        })?,
        None => stage2(&tree, &dependents, &mut results, o.keep, deadline)?,
    }
    let report = report(&results, &population, &o);
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
    // In diff mode a missed mutant fails the run; one the budget left untested is listed.
    let missed: Vec<&str> = results
        .values()
        .flatten()
        .filter(|(_, o)| {
            *o == Outcome::Missed || (*o == Outcome::NotPackaged && deadline.is_none())
        })
        .map(|(m, _)| m.name.as_str())
        .collect();
    if o.diff.is_some() && !missed.is_empty() {
        return Err(format!(
            "mutants: {} mutant(s) of the changed lines survive every test (kill them with a test \
             of the behaviour, or argue them equivalent in xtask/mutants-equivalent.txt):\n{}",
            missed.len(),
            missed.join("\n")
        ));
    }
    Ok(())
}

/// The commit this submission started from: `xtask/mutants-base.txt` names the last commit CI
/// passed on (updated when a submission lands); `HEAD~1` if that commit is not in the clone.
pub fn submission_base(root: &Path) -> String {
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
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("git ls-files: {e}"))?;
    for file in out.stdout.split(|&b| b == 0).filter(|f| !f.is_empty()) {
        let file = String::from_utf8_lossy(file).to_string();
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
    let out = Command::new("git")
        .args(["diff", "--no-ext-diff", rev, "--", "fmu"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("git diff: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git diff {rev}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let path = root.join("target/mutants/changes.diff");
    std::fs::create_dir_all(path.parent().expect("parent")).map_err(|e| e.to_string())?;
    std::fs::write(&path, &out.stdout).map_err(|e| e.to_string())?;
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
    let out = crate::stages::output(&mut command)?;
    if !out.status.success() {
        return Err(format!(
            "cargo mutants --list: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    // A diff that touches no mutable code (only tests, say) lists nothing, not even `[]`.
    if out.stdout.iter().all(u8::is_ascii_whitespace) {
        return Ok(Vec::new());
    }
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo mutants --list: {e}"))?;
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

/// cargo-mutants on `mutants` of `package`, in place in the tree copy, with the tests of `tests`.
fn stage1(
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
    // Exit status 2 (missed mutants) and 3 (timeouts) are results, read from outcomes.json.
    let status = crate::stages::status(&mut command)?;
    let outcomes = read_outcomes(&out, package, mutants)
        .map_err(|e| format!("{e} (cargo mutants: {status})"))?;
    std::fs::write(&stamp, stamp_of(tree, STAGE1, mutants)).map_err(|e| e.to_string())?;
    Ok(outcomes)
}

/// cargo-mutants on `mutants` of `package` in place in the tree copy, with the tests of `tests`,
/// its results in `out`.
fn stage1_command(
    tool: &Path,
    tree: &Path,
    package: &str,
    tests: &[String],
    mutants: &[Mutant],
    out: &Path,
) -> Command {
    let mut command = Command::new(tool);
    command
        .args([
            "mutants",
            "--in-place",
            "--no-shuffle",
            "--baseline",
            "skip",
        ])
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
fn informative_order(mutants: Vec<Mutant>) -> Vec<Mutant> {
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
/// Its outcome is kept per mutant, so a rerun on the same sources reuses it.
fn stage1_before(
    tool: &Path,
    tree: &Path,
    tests: &[String],
    m: &Mutant,
    keep: bool,
    deadline: Instant,
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
    eprintln!("xtask: mutants: stage 1: {}", m.name);
    if !crate::stages::status_before(&mut command, deadline)? {
        // Stopped mid-mutant: cargo-mutants mutates in place, so put the sources back.
        sync_tree(&root())?;
        return Ok(Outcome::Untested);
    }
    let outcomes = read_outcomes(&out, &m.package, one)?;
    std::fs::write(&stamp, stamp_of(tree, STAGE1, one)).map_err(|e| e.to_string())?;
    Ok(outcomes[0].1)
}

/// What a stage's result depends on: the files under `dirs` of the tree copy (stage 1: fmu/
/// and the lock file; stage 2: tests/ too) and the mutants chosen. A rerun on the same ones
/// reuses the result.
fn stamp_of(tree: &Path, dirs: &[&str], mutants: &[Mutant]) -> String {
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

fn read_outcomes(
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

/// The mutants stage 1 missed, against the packaged FMUs (linux64).
fn stage2(
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
        let stamp = stamp_of(tree, STAGE2, &missed);
        let caught: BTreeSet<String> = match std::fs::read_to_string(&record) {
            Ok(text) if keep || text.lines().next() == Some(stamp.as_str()) => {
                eprintln!("xtask: mutants: stage 2 of {package}: from the run on these sources");
                text.lines().skip(1).map(str::to_string).collect()
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
                        packaged_all = true;
                    }
                    packaged(tree, &missed, &reached, before, &mut touched)
                };
                let caught = match attempt() {
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
                    .chain(caught.iter().cloned())
                    .collect::<Vec<_>>()
                    .join("\n");
                std::fs::write(&record, text).map_err(|e| e.to_string())?;
                caught
            }
        };
        for (m, outcome) in outcomes.iter_mut() {
            if caught.contains(&m.name) {
                *outcome = Outcome::CaughtPackaged;
            }
        }
    }
    // Newer than every build again, so that the next run rebuilds what the mutants left.
    backdate(&touched, SystemTime::now())
}

/// The names of `missed` that the packaged suite catches, each applied in turn to the tree
/// copy, the FMUs it `reached` packaged, the suite run, the source restored.
fn packaged(
    tree: &Path,
    missed: &[Mutant],
    reached: &[&String],
    before: SystemTime,
    touched: &mut BTreeSet<PathBuf>,
) -> Result<BTreeSet<String>, String> {
    let mut caught = BTreeSet::new();
    for m in missed {
        let file = tree.join(&m.file);
        let original = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
        std::fs::write(&file, apply(&original, &m.diff)?).map_err(|e| e.to_string())?;
        touched.insert(file.clone());
        let suite = package_models(tree, reached).and_then(|()| {
            backdate(touched, before)?;
            eprintln!("xtask: mutants: stage 2: {}", m.name);
            Ok(packaged_suite(tree, reached).is_err())
        });
        std::fs::write(&file, &original).map_err(|e| e.to_string())?;
        if suite? {
            caught.insert(m.name.clone());
        }
    }
    // The restored sources, packaged again, so that the next crate's FMUs are the truth.
    package_models(tree, reached)?;
    backdate(touched, before)?;
    Ok(caught)
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

/// The packaged-FMU suite in the tree copy, its every-FMU tests on `models`; Err when a test
/// fails.
fn packaged_suite(tree: &Path, models: &[&String]) -> Result<(), String> {
    let models: Vec<&str> = models.iter().map(|m| m.as_str()).collect();
    let status = cargo(tree)
        .args(["test", "--release", "-p", "fmu-harness", "--quiet"])
        .env("FMU_MODELS", models.join(","))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| e.to_string())?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{status}"))
    }
}

/// `original` with cargo-mutants' one-hunk `diff` applied: the hunk's context and removed lines,
/// found once, replaced by its context and added lines.
fn apply(original: &str, diff: &str) -> Result<String, String> {
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

/// A 95 % Wilson interval for `caught` of `n`, drawn from `population` without replacement.
fn interval(caught: usize, n: usize, population: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let fpc = if population > 1 {
        ((population - n) as f64 / (population - 1) as f64).max(0.0)
    } else {
        0.0
    };
    let z2 = 1.96f64.powi(2) * fpc;
    let (nf, p) = (n as f64, caught as f64 / n as f64);
    let centre = (p + z2 / (2.0 * nf)) / (1.0 + z2 / nf);
    let half = (z2 * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf))).sqrt() / (1.0 + z2 / nf);
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

fn report(
    results: &BTreeMap<String, Vec<(Mutant, Outcome)>>,
    population: &BTreeMap<String, usize>,
    o: &Options,
) -> String {
    let mut text = String::from("## Mutation score\n\n");
    text += &match &o.diff {
        Some(rev) => format!(
            "Written by `cargo xtask mutants --diff {rev}`: the mutants cargo-mutants \
             {CARGO_MUTANTS_VERSION} makes in the lines of `fmu/` changed since {rev} (at most \
             {} per crate, seed {}).\n\n",
            o.sample, o.seed
        ),
        None => format!(
            "Written by `cargo xtask mutants` (cargo-mutants {CARGO_MUTANTS_VERSION}): at most \
             {} mutants per crate of `fmu/`, drawn with seed {}. Stage 1 runs the tests of the \
             mutated crate and of every `fmu/` crate that depends on it (in-process); a mutant \
             it misses is packaged (linux64) and meets the packaged-FMU suite (`cargo test -p \
             fmu-harness`, stage 2). Score = caught / (caught + missed), with its 95 % Wilson \
             interval (finite-population corrected: exact when every mutant was tested); \
             mutants argued equivalent (`xtask/mutants-equivalent.txt`), timeouts and unviable \
             ones are apart.\n\n",
            o.sample, o.seed
        ),
    };
    text += "| crate | mutants | tested | caught in-process | caught packaged | missed | of which packaged suite not run | equivalent | timeout | unviable | untested (budget) | score | 95 % interval |\n";
    text += "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    let mut missed_names = Vec::new();
    for (package, outcomes) in results {
        let count = |k: Outcome| outcomes.iter().filter(|(_, o)| *o == k).count();
        let caught = count(Outcome::Caught) + count(Outcome::CaughtPackaged);
        let missed = count(Outcome::Missed) + count(Outcome::NotPackaged);
        let viable = caught + missed;
        let (lo, hi) = interval(caught, viable, population[package]);
        let score = if viable == 0 {
            "-".to_string()
        } else {
            format!("{:.1} %", 100.0 * caught as f64 / viable as f64)
        };
        text += &format!(
            "| {package} | {} | {} | {} | {} | {missed} | {} | {} | {} | {} | {} | {score} | {:.1}-{:.1} % |\n",
            population[package],
            outcomes.len(),
            count(Outcome::Caught),
            count(Outcome::CaughtPackaged),
            count(Outcome::NotPackaged),
            count(Outcome::Equivalent),
            count(Outcome::Timeout),
            count(Outcome::Unviable),
            count(Outcome::Untested),
            100.0 * lo,
            100.0 * hi
        );
        missed_names.extend(
            outcomes
                .iter()
                .filter(|(_, o)| matches!(o, Outcome::Missed | Outcome::NotPackaged))
                .map(|(m, o)| {
                    let untried = if *o == Outcome::NotPackaged {
                        " (packaged suite not run)"
                    } else {
                        ""
                    };
                    format!("`{}`{untried}", m.name)
                }),
        );
    }
    if !missed_names.is_empty() {
        text += "\nMissed by every test:\n\n";
        for name in missed_names {
            text += &format!("- {name}\n");
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn regex_syntax_is_escaped() {
        assert_eq!(regex_escape("a.b(c)-> f64"), "a\\.b\\(c\\)\\-> f64");
    }
}
