//! The exact Jacobian of a model in its own process, against Richardson-extrapolated central
//! differences of its own f64 equations: every component's in-process tests reach the
//! runtime's derivative code this way, without packaging.

use super::Run;
use crate::instance::jacobian::InitialOf;
use crate::instance::places::{jet_at, places};
use crate::instance::FmiState;
use crate::instance::Instance;
use crate::jet::Lanes;
use crate::lift::{Equations, Lifted};
use crate::model::Model;
use crate::variables::Access;

/// `exact`'s entries (row by row: unknowns, then knowns) from Initialization Mode's lifted
/// model at the instance's point: one known seeded at a time, its outputs' lane 0.
fn moving_columns<M: Model>(instance: &Instance<M>, unknowns: &[u32], knowns: &[u32]) -> Vec<f64> {
    let mut lifted = InitialOf::<M>::lift(&instance.model);
    let offsets = places(&mut lifted, &instance.vars);
    let mut out = vec![0.0; unknowns.len() * knowns.len()];
    for (c, k) in knowns.iter().enumerate() {
        jet_at::<M, _>(&mut lifted, offsets[*k as usize]).eps_mut()[0] = 1.0;
        lifted.outputs(instance.time);
        for (r, u) in unknowns.iter().enumerate() {
            out[r * knowns.len() + c] = jet_at::<M, _>(&mut lifted, offsets[*u as usize]).eps()[0];
        }
        jet_at::<M, _>(&mut lifted, offsets[*k as usize]).eps_mut()[0] = 0.0;
    }
    out
}

/// One entry that disagrees: unknown, known, exact, differences.
pub type Disagreement = (&'static str, &'static str, f64, f64);

/// The states' columns asked the ways importers ask them, each seed 2 on one state, against
/// twice the columns `exact` (by unknown, then known): every unknown with the states seeded
/// all at once; the state derivatives alone, in the state vector's order, by one state (as
/// CVode asks) and with every state seeded. The entries that differ, as (unknown, known, got,
/// expected).
fn state_columns<M: Model>(
    instance: &mut Instance<M>,
    unknowns: &[u32],
    knowns: &[u32],
    exact: &[f64],
) -> Result<Vec<(u32, u32, f64, f64)>, String> {
    let (nu, nk) = (unknowns.len(), knowns.len());
    let vars = &instance.vars;
    let states: Vec<(usize, u32)> = (knowns.iter().copied().enumerate())
        .filter(|(_, k)| vars[*k as usize].derivative.is_some())
        .collect();
    let state_refs: Vec<u32> = states.iter().map(|(_, k)| *k).collect();
    // The state derivatives' rows, in the state vector's order.
    let rates: Vec<usize> = (states.iter())
        .map(|(_, k)| {
            let name = vars[*k as usize].derivative;
            (0..nu)
                .find(|r| Some(vars[unknowns[*r] as usize].name) == name)
                .ok_or_else(|| format!("no unknown for {name:?}"))
        })
        .collect::<Result<_, _>>()?;
    let rate_refs: Vec<u32> = rates.iter().map(|r| unknowns[*r]).collect();
    let mut misses = Vec::new();
    let (mut all, mut some) = (vec![0.0; nu], vec![0.0; rates.len()]);
    for (i, (c, k)) in states.iter().enumerate() {
        let unit: Vec<f64> = (0..states.len())
            .map(|j| if i == j { 2.0 } else { 0.0 })
            .collect();
        instance.directional_derivative(unknowns, &state_refs, &unit, &mut all)?;
        let mut check = |r: usize, got: f64| {
            if got != 2.0 * exact[r * nk + c] {
                misses.push((unknowns[r], *k, got / 2.0, exact[r * nk + c]));
            }
        };
        for (r, got) in all.iter().enumerate() {
            check(r, *got);
        }
        instance.directional_derivative(&rate_refs, &[*k], &[2.0], &mut some)?;
        for (r, got) in rates.iter().zip(&some) {
            check(*r, *got);
        }
        instance.directional_derivative(&rate_refs, &state_refs, &unit, &mut some)?;
        for (r, got) in rates.iter().zip(&some) {
            check(*r, *got);
        }
    }
    Ok(misses)
}

impl<M: Model> Run<M> {
    /// Every entry of the Jacobian of the outputs and state derivatives by the states and
    /// continuous inputs, from `fmi2GetDirectionalDerivative`'s code (one unit seed per
    /// known), against differences of [`Equations::outputs`] in each known; the entries whose
    /// relative deviation exceeds `tolerance` (relative to the entry, at least 1e-6 of the
    /// largest entry of the unknown's row). First checks that the lifted model's jets follow
    /// the variable table's order; also checks that one call seeding every known at
    /// once gives `J seed`, and the adjoint `w^T J`.
    pub fn jacobian_disagreements(&mut self, tolerance: f64) -> Result<Vec<Disagreement>, String> {
        let instance = &mut self.instance;
        assert_eq!(instance.state, FmiState::StepComplete);
        crate::instance::places::places_follow_the_table(&instance.model, &instance.vars)?;
        let vars = &instance.vars;
        let unknowns: Vec<u32> = (0..vars.len() as u32)
            .filter(|i| crate::instance::jacobian::continuous_unknown(&vars[*i as usize]))
            .collect();
        let knowns: Vec<u32> = (0..vars.len() as u32)
            .filter(|i| {
                let v = &vars[*i as usize];
                v.derivative.is_some()
                    || (v.is_real()
                        && v.causality == crate::Causality::Input
                        && v.variability == crate::Variability::Continuous)
            })
            .collect();
        let (nu, nk) = (unknowns.len(), knowns.len());
        let mut exact = vec![0.0; nu * nk];
        let mut column = vec![0.0; nu];
        for (c, k) in knowns.iter().enumerate() {
            instance.directional_derivative(&unknowns, &[*k], &[1.0], &mut column)?;
            for r in 0..nu {
                exact[r * nk + c] = column[r];
            }
        }
        let unit_misses = state_columns(instance, &unknowns, &knowns, &exact)?;
        // One call with every known seeded, and the adjoint, against the columns.
        let seed: Vec<f64> = (0..nk).map(|c| 0.5 + c as f64 * 0.25).collect();
        instance.directional_derivative(&unknowns, &knowns, &seed, &mut column)?;
        let weights: Vec<f64> = (0..nu).map(|r| 1.0 - r as f64 * 0.125).collect();
        let mut adjoint = vec![0.0; nk];
        instance.adjoint_derivative(&unknowns, &knowns, &weights, &mut adjoint)?;
        let mut out = Vec::new();
        let name = |vr: u32| instance.vars[vr as usize].name;
        for (u, k, got, want) in unit_misses {
            out.push((name(u), name(k), got, want));
        }
        for r in 0..nu {
            let j_seed: f64 = (0..nk).map(|c| exact[r * nk + c] * seed[c]).sum();
            if (j_seed - column[r]).abs() > 1e-12 * j_seed.abs().max(1.0) {
                out.push((name(unknowns[r]), "J seed", column[r], j_seed));
            }
        }
        for c in 0..nk {
            let w_j: f64 = (0..nu).map(|r| weights[r] * exact[r * nk + c]).sum();
            if (w_j - adjoint[c]).abs() > 1e-12 * w_j.abs().max(1.0) {
                out.push(("w^T J", name(knowns[c]), adjoint[c], w_j));
            }
        }
        // The same entries with the parameters moving too (Initialization Mode's lifted model):
        // where a number held as a plain f64 after initialization moves with a known, they
        // differ.
        let moving = moving_columns(instance, &unknowns, &knowns);
        for (i, (e, m)) in exact.iter().zip(&moving).enumerate() {
            if (e - m).abs() > 1e-14 * e.abs().max(m.abs()) {
                out.push((name(unknowns[i / nk]), name(knowns[i % nk]), *e, *m));
            }
        }
        // Differences of the f64 equations.
        let model = instance.model.clone();
        let value = |m: &M, vr: u32| match instance.vars[vr as usize].access {
            Access::Real { get, .. } => get(m),
            Access::Integer { get, .. } => f64::from(get(m)),
        };
        let t = instance.time;
        let moved = |k: u32, h: f64| -> Vec<f64> {
            let mut m = model.clone();
            if let Access::Real { get, set } = instance.vars[k as usize].access {
                let x = get(&m);
                set(&mut m, x + h);
            }
            m.outputs(t);
            unknowns.iter().map(|u| value(&m, *u)).collect()
        };
        for (c, k) in knowns.iter().enumerate() {
            let scale = value(&model, *k).abs().max(1.0);
            let central = |h: f64| -> Vec<f64> {
                let (up, down) = (moved(*k, h), moved(*k, -h));
                up.iter()
                    .zip(&down)
                    .map(|(a, b)| (a - b) / (2.0 * h))
                    .collect()
            };
            let h = 1e-3 * scale;
            let (d1, d2) = (central(h), central(h / 2.0));
            for r in 0..nu {
                let richardson = (4.0 * d2[r] - d1[r]) / 3.0;
                let row_scale = (0..nk).map(|c| exact[r * nk + c].abs()).fold(0.0, f64::max);
                let e = exact[r * nk + c];
                let allowed = tolerance * e.abs().max(1e-6 * row_scale).max(1e-12);
                if (e - richardson).abs() > allowed {
                    out.push((name(unknowns[r]), name(*k), e, richardson));
                }
            }
        }
        Ok(out)
    }
}
