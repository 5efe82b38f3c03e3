//! The table of a mutants run: per crate, what was caught where, the score and its interval.

use super::{Mutant, Options, Outcome, CARGO_MUTANTS_VERSION};
use std::collections::BTreeMap;

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

pub(super) fn report(
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
