//! The table of a mutants run: per crate, what was caught where, the score and its interval.

use super::{Mutant, Options, Outcome, CARGO_MUTANTS_VERSION};
use std::collections::{BTreeMap, BTreeSet};

/// A 95 % Wilson interval for `caught` of `n`, drawn from `population` without replacement.
pub(super) fn interval(caught: usize, n: usize, population: usize) -> (f64, f64) {
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

/// The report of a run: `results` of the mutants tested, `listed` every mutant listed, by
/// crate.
pub(super) fn report(
    results: &BTreeMap<String, Vec<(Mutant, Outcome)>>,
    listed: &BTreeMap<String, Vec<Mutant>>,
    changed: Option<&BTreeSet<(String, String)>>,
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
             mutated crate and of every `fmu/` crate that depends on it (in-process), first on \
             the unmutated tree (a failing baseline fails the run); a mutant \
             it misses is packaged (linux64) and meets the packaged-FMU suite (`cargo test -p \
             fmu-harness`, stage 2). Score = caught / (caught + missed), with its 95 % Wilson \
             interval (finite-population corrected: exact when every mutant was tested); \
             mutants argued equivalent (`xtask/mutants-equivalent.txt`), timeouts and unviable \
             ones are apart.\n\n",
            o.sample, o.seed
        ),
    };
    text += "| crate | mutants | tested | caught in-process | caught packaged | missed | of which packaged suite not run | equivalent | timeout | unviable | not judged | untested (budget) | score | 95 % interval |\n";
    text += "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    let mut missed_names = Vec::new();
    let mut unjudged_names = Vec::new();
    for (package, outcomes) in results {
        let population = listed.get(package).map_or(0, Vec::len);
        let count = |k: Outcome| outcomes.iter().filter(|(_, o)| *o == k).count();
        let caught = count(Outcome::Caught) + count(Outcome::CaughtPackaged);
        let missed = count(Outcome::Missed) + count(Outcome::NotPackaged);
        let viable = caught + missed;
        let (lo, hi) = interval(caught, viable, population);
        let score = if viable == 0 {
            "-".to_string()
        } else {
            format!("{:.1} %", 100.0 * caught as f64 / viable as f64)
        };
        text += &format!(
            "| {package} | {population} | {} | {} | {} | {missed} | {} | {} | {} | {} | {} | {} | {score} | {:.1}-{:.1} % |\n",
            outcomes.len(),
            count(Outcome::Caught),
            count(Outcome::CaughtPackaged),
            count(Outcome::NotPackaged),
            count(Outcome::Equivalent),
            count(Outcome::Timeout),
            count(Outcome::Unviable),
            count(Outcome::Unjudged),
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
        unjudged_names.extend(
            outcomes
                .iter()
                .filter(|(_, o)| *o == Outcome::Unjudged)
                .map(|(m, _)| format!("`{}`", m.name)),
        );
    }
    for (title, names) in [
        ("Missed by every test", missed_names),
        (
            "Not judged (the packaged suite failed without a test failing)",
            unjudged_names,
        ),
    ] {
        if !names.is_empty() {
            text += &format!("\n{title}:\n\n");
            for name in names {
                text += &format!("- {name}\n");
            }
        }
    }
    if let Some(changed) = changed {
        text += &untested_functions(results, listed, changed);
    }
    text
}

/// A function's name without its path and generics, as the diff names it.
fn bare(function: &str) -> &str {
    let last = function.rsplit("::").next().unwrap_or(function);
    last.split('<').next().unwrap_or(last)
}

/// The changed functions none of whose mutants a test judged (caught or missed), each with
/// what became of its mutants: not drawn (past `--sample`), untested (the budget), argued
/// equivalent, unviable, a timeout, not judged.
fn untested_functions(
    results: &BTreeMap<String, Vec<(Mutant, Outcome)>>,
    listed: &BTreeMap<String, Vec<Mutant>>,
    changed: &BTreeSet<(String, String)>,
) -> String {
    let mut by_function: BTreeMap<(&str, &str), Vec<Option<Outcome>>> = BTreeMap::new();
    for m in listed.values().flatten() {
        let outcome = results
            .get(&m.package)
            .and_then(|r| r.iter().find(|(t, _)| t.name == m.name))
            .map(|(_, o)| *o);
        by_function
            .entry((&m.file, &m.function))
            .or_default()
            .push(outcome);
    }
    // A changed function cargo-mutants makes no mutant of (an `unsafe fn`, which it skips, or
    // one with nothing to mutate).
    let mut lines: Vec<String> = changed
        .iter()
        .filter(|(file, f)| {
            !by_function
                .keys()
                .any(|(mf, mfn)| mf == file && bare(mfn) == f)
        })
        .map(|(file, f)| format!("- `{file}`: `{f}` (no mutant listed)\n"))
        .collect();
    let judged = |o: &Option<Outcome>| {
        matches!(
            o,
            Some(Outcome::Caught | Outcome::CaughtPackaged | Outcome::Missed)
        )
    };
    lines.extend(
        by_function
            .into_iter()
            .filter(|(_, outcomes)| !outcomes.iter().any(judged))
            .map(|((file, function), outcomes)| {
                let mut why: BTreeMap<String, usize> = BTreeMap::new();
                for o in outcomes {
                    let what = o.map_or("not drawn".to_string(), |o| format!("{o:?}"));
                    *why.entry(what).or_default() += 1;
                }
                let why: Vec<String> = why.iter().map(|(w, n)| format!("{n} {w}")).collect();
                format!("- `{file}`: `{function}` ({})\n", why.join(", "))
            }),
    );
    if lines.is_empty() {
        return "\nEvery changed function had a mutant judged by a test.\n".to_string();
    }
    format!(
        "\nChanged functions with no mutant judged by a test:\n\n{}",
        lines.concat()
    )
}

#[cfg(test)]
#[test]
fn a_changed_function_without_a_judged_mutant_is_named() {
    let m = |function: &str, name: &str| Mutant {
        name: name.to_string(),
        package: "p".to_string(),
        file: "fmu/p/src/lib.rs".to_string(),
        diff: String::new(),
        function: function.to_string(),
        genre: String::new(),
    };
    let listed = BTreeMap::from([(
        "p".to_string(),
        vec![
            m("f", "f1"),
            m("f", "f2"),
            m("g", "g1"),
            m("h", "h1"),
            m("h", "h2"),
        ],
    )]);
    let results = BTreeMap::from([(
        "p".to_string(),
        vec![
            (m("f", "f1"), Outcome::Caught),
            (m("g", "g1"), Outcome::Untested),
            (m("h", "h1"), Outcome::Unjudged),
        ],
    )]);
    let changed = BTreeSet::from([
        ("fmu/p/src/lib.rs".to_string(), "f".to_string()),
        ("fmu/p/src/lib.rs".to_string(), "unsafe_one".to_string()),
    ]);
    let text = untested_functions(&results, &listed, &changed);
    assert!(!text.contains("`f`"), "{text}");
    assert!(text.contains("`unsafe_one` (no mutant listed)"), "{text}");
    assert!(text.contains("`g` (1 Untested)"), "{text}");
    assert!(text.contains("`h` (1 Unjudged, 1 not drawn)"), "{text}");
}
