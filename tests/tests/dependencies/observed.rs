//! What the probe saw, judged against what the model description declares.

use super::*;

/// The knowns an unknown declares: its list, or every known when it has none.
pub(crate) fn declared(unknown: &Unknown, knowns: &[usize]) -> BTreeSet<usize> {
    match &unknown.dependencies {
        Some(list) => list.iter().copied().collect(),
        None => knowns.iter().copied().collect(),
    }
}

/// How the observed dependencies differ from the declared ones, in words: those observed but
/// not declared, and those declared but never observed. `FMU_DEPENDENCIES_OBSERVED=1` prints
/// what was observed of each unknown whose declaration differs.
pub(crate) struct Mismatches {
    pub(crate) undeclared: Vec<String>,
    pub(crate) unseen: Vec<String>,
}

impl Mismatches {
    pub(crate) fn extend(&mut self, other: Mismatches) {
        self.undeclared.extend(other.undeclared);
        self.unseen.extend(other.unseen);
    }
}

pub(crate) fn mismatches(
    md: &ModelDescription,
    list: &str,
    unknowns: &[Unknown],
    knowns: &[usize],
    observed: &[BTreeSet<usize>],
) -> Mismatches {
    let (mut undeclared, mut unseen) = (vec![], vec![]);
    for (u, seen) in unknowns.iter().zip(observed) {
        let declared = declared(u, knowns);
        let (model, unknown) = (&md.model_name, name(md, u.index));
        for k in seen.difference(&declared) {
            let known = name(md, *k);
            undeclared.push(format!(
                "{model}: {list} {unknown} moves with {known} but does not declare it"
            ));
        }
        for k in declared.difference(seen) {
            let known = name(md, *k);
            unseen.push(format!(
                "{model}: {list} {unknown} declares {known} but never moved with it"
            ));
        }
        if std::env::var_os("FMU_DEPENDENCIES_OBSERVED").is_some() && declared != *seen {
            let names: Vec<&str> = seen.iter().map(|k| name(md, *k)).collect();
            eprintln!("{model}: {list} {unknown} observed {names:?}");
        }
    }
    Mismatches { undeclared, unseen }
}
/// What the probe has seen of the unknowns: for each, the knowns it moved with and by how much
/// at most, and the largest magnitude it took.
pub(crate) struct Observed {
    pub(crate) moves: Vec<BTreeMap<usize, f64>>,
    pub(crate) scale: Vec<f64>,
}

impl Observed {
    pub(crate) fn new(unknowns: usize) -> Self {
        Observed {
            moves: vec![BTreeMap::new(); unknowns],
            scale: vec![0.0; unknowns],
        }
    }

    /// A sample's base point: the magnitudes there.
    pub(crate) fn base(&mut self, base: &[f64]) {
        for (s, v) in self.scale.iter_mut().zip(base) {
            *s = s.max(v.abs());
        }
    }

    /// Notes how far every unknown moved from `base` to `moved_to` with `known`.
    pub(crate) fn record(&mut self, base: &[f64], moved_to: &[f64], known: usize) {
        self.record_except(base, moved_to, known, &[]);
    }

    /// `record`, but for the unknowns marked in `skip`.
    pub(crate) fn record_except(
        &mut self,
        base: &[f64],
        moved_to: &[f64],
        known: usize,
        skip: &[bool],
    ) {
        for (u, (a, b)) in base.iter().zip(moved_to).enumerate() {
            if skip.get(u) == Some(&true) {
                continue;
            }
            if moved(*a, *b, 0.0) {
                let d = if a.is_nan() != b.is_nan() {
                    f64::INFINITY
                } else {
                    (a - b).abs()
                };
                let m = self.moves[u].entry(known).or_insert(0.0);
                *m = m.max(d);
            }
        }
    }

    /// The dependencies: the moves beyond the rounding of the unknown's largest magnitude over
    /// all samples (a tension that is zero but for 1e-12 N of rounding at one point is
    /// thousands of newtons at others; a loss that is small at low speed is still a loss).
    pub(crate) fn dependencies(&self) -> Vec<BTreeSet<usize>> {
        self.moves
            .iter()
            .zip(&self.scale)
            .map(|(moves, scale)| {
                moves
                    .iter()
                    .filter(|(_, d)| **d > 1e-12 * scale)
                    .map(|(k, _)| *k)
                    .collect()
            })
            .collect()
    }
}
