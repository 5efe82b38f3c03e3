//! The differencing engine: an FMU's exact derivatives judged against Richardson-extrapolated
//! differences of its own values.

use super::*;

/// Where the search over the steps ends: an entry and differences that agree within this,
/// relatively.
const AGREE: f64 = 1e-8;

/// How far, relatively, an exact entry and the best differences over every step may differ:
/// the CVT's values through its belt's root (solved by iteration) come within 1.3e-8 at best
/// at some parameters; a wrong derivative (a term missing, a sign) differs by orders of
/// magnitude more.
const LIMIT: f64 = 3e-8;

/// The FMU's exact derivatives (`fmi2GetDirectionalDerivative`) at the probed points, for an
/// FMU that provides them.
/// - Each entry against central differences of the FMU's own values with Richardson
///   extrapolation (error O(h^4)) at the steps in `STEPS`, then against one-sided ones (O(h^3))
///   on either side: the first that agrees within [`AGREE`] relative ends the search, and an
///   entry fails where none comes within [`LIMIT`]. Differences
///   have a best step between truncation and rounding (a kink of `abs` or of a clipped tension
///   that a large step crosses); at a kink (a loss's quadrant switch) and at the edge of a
///   known's range only one side's differences exist. A wrong derivative agrees with none.
/// - Relative to the entry, or to what the differences cannot resolve below: 1e-8 of the
///   largest value among the unknowns of its unit, per unit of the known (a support torque that
///   is the small sum of two large torques), and the probe's zero.
/// - Each entry's magnitude times its known's scale is recorded as the probe records a move,
///   so the same rule judges it: nonzero where undeclared, or declared and never nonzero, is a
///   mismatch.
pub(crate) struct Exact {
    /// Positions of the Real unknowns among the probe's unknowns.
    real: Vec<usize>,
    vrs: Vec<u32>,
    /// For each Real unknown, those of the same unit.
    peers: Vec<Vec<usize>>,
    observed: Observed,
    failures: Vec<String>,
    /// Entries checked against the differences, and the largest relative deviation.
    checked: usize,
    worst: f64,
    /// Entries at points where the value jumps.
    jumps: usize,
    /// Columns probed, and those of knowns that cannot move.
    columns: usize,
    fixed: usize,
}

/// Steps of the differences, relative to the known's magnitude (at least 1), in the order tried.
const STEPS: [f64; 8] = [1e-4, 1e-3, 1e-5, 1e-2, 1e-6, 1e-7, 1e-9, 1e-11];

fn unit(md: &ModelDescription, index: usize) -> Option<&str> {
    match &md.model_variables[index - 1].kind {
        VariableType::Real { unit, .. } => unit.as_deref(),
        _ => None,
    }
}

impl Exact {
    /// `continuous_time`: the probe is in Continuous-Time Mode, where a discrete output is no
    /// unknown of the derivative calls (it changes at events only).
    pub(crate) fn new(
        md: &ModelDescription,
        unknowns: &[Unknown],
        continuous_time: bool,
    ) -> Option<Exact> {
        let discrete = |u: usize| {
            md.model_variables[unknowns[u].index - 1].variability == Variability::Discrete
        };
        let real: Vec<usize> = (0..unknowns.len())
            .filter(|u| !variable(md, unknowns[*u].index).integer)
            .filter(|u| !(continuous_time && discrete(*u)))
            .collect();
        let vrs = real
            .iter()
            .map(|u| variable(md, unknowns[*u].index).vr)
            .collect();
        let unit_of = |u: usize| unit(md, unknowns[real[u]].index);
        let peers = (0..real.len())
            .map(|u| {
                (0..real.len())
                    .filter(|p| unit_of(*p) == unit_of(u))
                    .collect()
            })
            .collect();
        md.co_simulation
            .provides_directional_derivative
            .then(|| Exact {
                observed: Observed::new(real.len()),
                real,
                vrs,
                peers,
                failures: vec![],
                checked: 0,
                worst: 0.0,
                jumps: 0,
                columns: 0,
                fixed: 0,
            })
    }

    /// The column of known `k` (at `before`) against differences of `at(value)`, the probe's
    /// values with the known set to value (None where it is refused).
    pub(crate) fn column(
        &mut self,
        inst: &Instance,
        md: &ModelDescription,
        (k, before): (usize, f64),
        base: &[f64],
        at: &dyn Fn(f64) -> Option<Vec<f64>>,
    ) -> Vec<bool> {
        self.columns += 1;
        let mut exact = vec![0.0; self.vrs.len()];
        let status =
            inst.directional_derivative(&self.vrs, &[variable(md, k).vr], &[1.0], &mut exact);
        assert_eq!(status, OK, "{}", inst.log_text());
        let scale = before.abs().max(1.0);
        let mut jumped = vec![false; base.len()];
        let base: Vec<f64> = self.real.iter().map(|u| base[*u]).collect();
        self.observed.base(&base);
        for (u, d) in exact.iter().enumerate() {
            if *d != 0.0 {
                let m = self.observed.moves[u].entry(k).or_insert(0.0);
                *m = m.max(d.abs() * scale);
            }
        }
        let real = |v: Vec<f64>| -> Vec<f64> { self.real.iter().map(|u| v[*u]).collect() };
        let quotient = |a: &[f64], b: &[f64], h: f64| -> Vec<f64> {
            a.iter().zip(b).map(|(a, b)| (a - b) / h).collect()
        };
        // Richardson's extrapolation of differences at h and h/2: central ones (error O(h^2),
        // then O(h^4)); one-sided ones at the edge of the known's range, at h/4 as well (error
        // O(h), then O(h^2), then O(h^3)).
        let combine = |fine: &[f64], coarse: &[f64], gain: f64| -> Vec<f64> {
            fine.iter()
                .zip(coarse)
                .map(|(f, c)| (gain * f - c) / (gain - 1.0))
                .collect()
        };
        let one_sided = |h: f64| -> Option<Vec<f64>> {
            let d = |k: f64| Some(quotient(&real(at(before + h / k)?), &base, h / k));
            let (d1, d2, d4) = (d(1.0)?, d(2.0)?, d(4.0)?);
            Some(combine(
                &combine(&d4, &d2, 2.0),
                &combine(&d2, &d1, 2.0),
                4.0,
            ))
        };
        let central = |h: f64| -> Option<Vec<f64>> {
            let [up, down, half_up, half_down] =
                [h, -h, h / 2.0, -h / 2.0].map(|d| at(before + d).map(real));
            let (u, d, hu, hd) = (up?, down?, half_up?, half_down?);
            Some(combine(
                &quotient(&hu, &hd, h),
                &quotient(&u, &d, 2.0 * h),
                4.0,
            ))
        };
        // 1e-8 of it is what the differences cannot resolve; 1e-4 of the unknown's largest
        // magnitude over the samples makes that the probe's zero (1e-12 of it).
        let unresolved: Vec<f64> = (0..exact.len())
            .map(|u| {
                let peers = self.peers[u].iter().map(|p| base[*p].abs());
                peers.fold(1e-4 * self.observed.scale[u], f64::max) / scale
            })
            .collect();
        let mut open: Vec<usize> = (0..exact.len()).collect();
        let mut best = vec![f64::INFINITY; exact.len()];
        let mut differences = false;
        // Central differences first; then each side's, which is the derivative the FMU gives
        // at a kink (the branch the value takes) and the one left at the edge of the range.
        let tries = [1.0, 1.0, -1.0]
            .iter()
            .enumerate()
            .flat_map(|(side, sign)| STEPS.iter().map(move |step| (side, sign * step * scale)));
        for (side, h) in tries {
            let richardson = if side == 0 { central(h) } else { one_sided(h) };
            let Some(richardson) = richardson else {
                continue;
            };
            differences = true;
            open.retain(|&u| {
                let richardson = richardson[u];
                let difference = (exact[u] - richardson).abs();
                let deviation = if difference == 0.0 {
                    0.0
                } else {
                    difference / exact[u].abs().max(richardson.abs()).max(unresolved[u])
                };
                best[u] = best[u].min(deviation);
                deviation > AGREE
            });
            if open.is_empty() {
                break;
            }
        }
        open.retain(|u| best[*u] > LIMIT);
        self.checked += exact.len();
        for (u, b) in best.iter().enumerate() {
            if !open.contains(&u) {
                self.worst = self.worst.max(*b);
            }
        }
        // A known that has one valid value (the sprocket shaft's ratio, 1) has no differences.
        if !differences {
            self.fixed += 1;
            return jumped;
        }
        // A value that jumps at this point (a sheave started exactly on its stop, freed by
        // any move one way and refused the other) has no derivative there: where, on every
        // side the known can move to, the value differs from the line of the exact derivative
        // by as much at h/16 as at h (and beyond rounding), the entry is not judged, and
        // neither is the probe's small move of it. A wrong derivative leaves a difference
        // that shrinks with h.
        let h = 1e-7 * scale;
        let sides: Vec<(f64, Vec<f64>, Vec<f64>)> = [h, -h]
            .iter()
            .filter_map(|h| Some((*h, real(at(before + h)?), real(at(before + h / 16.0)?))))
            .collect();
        open.retain(|&u| {
            let off = |value: f64, h: f64| value - base[u] - exact[u] * h;
            let jumps = !sides.is_empty()
                && sides.iter().all(|(h, far, near)| {
                    let (far_off, near_off) = (off(far[u], *h), off(near[u], h / 16.0));
                    let rounding = 1e3 * f64::EPSILON * base[u].abs().max(far[u].abs());
                    near_off.abs() > rounding && near_off.abs() > 0.5 * far_off.abs()
                });
            if jumps {
                jumped[self.real[u]] = true;
                self.jumps += 1;
            }
            !jumps
        });
        for u in open {
            self.failures.push(format!(
                "{}: d{}/d{} = {} at {before}: no difference step agrees (best relative deviation {:e})",
                md.model_name,
                md.model_variables[self.vrs[u] as usize].name,
                name(md, k),
                exact[u],
                best[u]
            ));
        }
        jumped
    }

    /// The mismatches of the exact entries with the declarations, over the Real knowns: an
    /// entry that is nonzero where no dependency is declared, and a declared dependency whose
    /// entry is never nonzero although the probe's small moves saw it (`local`, by unknown):
    /// a dependency only far moves see is a switch (a sheave started on its stop or not),
    /// which no derivative shows.
    pub(crate) fn mismatches(
        self,
        md: &ModelDescription,
        list: &str,
        unknowns: &[Unknown],
        knowns: &[usize],
        local: &[BTreeSet<usize>],
    ) -> Mismatches {
        let real: BTreeSet<usize> = knowns
            .iter()
            .copied()
            .filter(|k| !variable(md, *k).integer)
            .collect();
        let knowns: Vec<usize> = real.iter().copied().collect();
        let mut found = Mismatches {
            undeclared: self.failures,
            unseen: vec![],
        };
        for (u, seen) in self.observed.dependencies().iter().enumerate() {
            let unknown = &unknowns[self.real[u]];
            let declared: BTreeSet<usize> = declared(unknown, &knowns)
                .intersection(&real)
                .copied()
                .collect();
            let (model, unknown) = (&md.model_name, name(md, unknown.index));
            for k in seen.difference(&declared) {
                found.undeclared.push(format!(
                    "{model}: exact {list} {unknown}: d{unknown}/d{} is nonzero but {unknown} does not declare it",
                    name(md, *k)
                ));
            }
            let moved: BTreeSet<usize> = declared
                .intersection(&local[self.real[u]])
                .copied()
                .collect();
            for k in moved.difference(seen) {
                found.unseen.push(format!(
                    "{model}: exact {list} {unknown}: declares {}, and small moves of it move {unknown}, but d{unknown}/d{} is never nonzero",
                    name(md, *k),
                    name(md, *k)
                ));
            }
        }
        eprintln!(
            "{}: {list}: {} exact entries against differences, largest relative deviation {:.1e}; not judged: {} at points where the value jumps ({:.2} % of those judged), {} of {} columns of knowns that cannot move ({:.1} %)",
            md.model_name,
            self.checked,
            self.worst,
            self.jumps,
            100.0 * self.jumps as f64 / self.checked.max(1) as f64,
            self.fixed,
            self.columns,
            100.0 * self.fixed as f64 / self.columns.max(1) as f64
        );
        // And few knowns that cannot move: a probe that moved none would judge nothing.
        if 10 * self.fixed > self.columns {
            found.undeclared.push(format!(
                "{}: {list}: {} of {} columns of knowns that cannot move: more than 10 %",
                md.model_name, self.fixed, self.columns
            ));
        }
        // Entries not judged stay few: most of a model's points have a derivative.
        if 20 * self.jumps > self.checked {
            found.undeclared.push(format!(
                "{}: {list}: {} of {} exact entries not judged (the value jumps there): more than 5 %",
                md.model_name, self.jumps, self.checked
            ));
        }
        found
    }
}
