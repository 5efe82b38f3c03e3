//! The Jacobian of a model written over the number type ([`crate::lift`]): the model lifted to
//! jets once at instantiation, and at each point its equations run once over them for all the
//! knowns of the mode, in chunks of the jet's lanes.
//!
//! After Initialization Mode the knowns are the same at every point (the continuous inputs,
//! and in Model Exchange the states), so the first derivative call at a point sweeps them all
//! and keeps every column; the other calls at that point (one unit seed per state, as CVode
//! and Rosenbrock importers ask, or the adjoint) are answered from the columns kept, until a
//! value or the time changes. No model is cloned and nothing allocates after instantiation.
//!
//! Before a sweep every unknown's derivatives are set to NaN: an unknown the equations do not
//! compute stays NaN, and the call returns Discard naming it, as it does where the derivatives
//! are not finite.

use super::{FmiState, Instance};
use crate::jet::Lanes;
use crate::lift::{Equations, Lifted};
use crate::model::Model;
use crate::variables::{Access, Causality, Variability};

type JetOf<M> = <<M as Model>::Jets as Lifted<M>>::Jet;

/// No lane, no offset.
const NONE: usize = usize::MAX;

pub(crate) struct Jacobian<M: Model> {
    lifted: M::Jets,
    /// By value reference: the byte offset of the variable's jet in `lifted` (NONE: not Real).
    offsets: Vec<usize>,
    /// The knowns after initialization (the continuous inputs and the states, FMI 2.0.4
    /// section 2.2.8), in column order.
    plan: Vec<u32>,
    /// By value reference: its column among `plan` (NONE: not a known there).
    column: Vec<usize>,
    /// The unknowns after initialization.
    unknowns: Vec<u32>,
    /// `values[vr * plan.len() + c]`: the derivative of unknown `vr` by known `plan[c]`.
    values: Vec<f64>,
    /// The columns hold the current point.
    pub(crate) valid: bool,
    /// An Initialization Mode sweep left derivatives in the parameters' jets: clear them all
    /// before the next sweep after it.
    stale: bool,
}

impl<M: Model> Jacobian<M> {
    pub(crate) fn new(model: &M, vars: &[crate::Var<M>]) -> Self {
        let mut lifted = M::Jets::lift(model);
        let mut offsets = vec![NONE; vars.len()];
        if <M::Jets as Lifted<M>>::LIFTED {
            let reals: Vec<usize> = (0..vars.len()).filter(|i| vars[*i].is_real()).collect();
            let base = &lifted as *const M::Jets as usize;
            let size = std::mem::size_of::<M::Jets>() - std::mem::size_of::<JetOf<M>>();
            let mut places = Vec::with_capacity(reals.len());
            lifted.visit(&mut |j| places.push(j as *mut JetOf<M> as usize - base));
            assert_eq!(
                places.len(),
                reals.len(),
                "{}: the lifted model visits {} Real variables, the table has {}",
                M::NAME,
                places.len(),
                reals.len()
            );
            for (vr, place) in reals.iter().zip(&places) {
                assert!(
                    *place <= size,
                    "{}: a Real variable outside the model",
                    M::NAME
                );
                offsets[*vr] = *place;
            }
            check_order(model, vars, &reals);
        }
        let continuous_input = |v: &crate::Var<M>| {
            v.is_real()
                && v.causality == Causality::Input
                && v.variability == Variability::Continuous
        };
        let plan: Vec<u32> = (0..vars.len() as u32)
            .filter(|i| {
                let v = &vars[*i as usize];
                continuous_input(v) || v.derivative.is_some()
            })
            .collect();
        let mut column = vec![NONE; vars.len()];
        for (c, k) in plan.iter().enumerate() {
            column[*k as usize] = c;
        }
        let unknowns = (0..vars.len() as u32)
            .filter(|i| continuous_unknown(&vars[*i as usize]))
            .collect();
        Jacobian {
            lifted,
            offsets,
            values: vec![0.0; vars.len() * plan.len()],
            plan,
            column,
            unknowns,
            valid: false,
            stale: false,
        }
    }

    /// The jet of the Real variable `vr`.
    fn jet(&mut self, vr: u32) -> &mut JetOf<M> {
        jet_at::<M>(&mut self.lifted, self.offsets[vr as usize])
    }

    /// Every derivative 0.
    fn clear(&mut self) {
        for vr in 0..self.offsets.len() as u32 {
            if self.offsets[vr as usize] != NONE {
                self.jet(vr).eps_mut().fill(0.0);
            }
        }
    }

    fn poison(&mut self, unknowns: &[u32], knowns: &[u32]) {
        for u in unknowns {
            if !knowns.contains(u) {
                self.jet(*u).eps_mut().fill(f64::NAN);
            }
        }
    }
}

/// A continuous Real output or a state derivative: the unknowns after initialization in every
/// mode (FMI 2.0.4 section 2.1.9, FMI 3.0.2 section 2.2.12). Discrete Real outputs are also
/// unknowns in Event Mode and at a Co-Simulation communication point, not in Continuous-Time
/// Mode; they change only at events, so their derivatives are 0.
pub(crate) fn continuous_unknown<M>(v: &crate::Var<M>) -> bool {
    v.is_real()
        && ((v.causality == Causality::Output && v.variability == Variability::Continuous)
            || v.derivative_of.is_some())
}

/// The lifted model visits the Real variables in the order of the table: each variable set to
/// a value of its own in the f64 model is found at its place in the lifted one.
fn check_order<M: Model>(model: &M, vars: &[crate::Var<M>], reals: &[usize]) {
    let mut marked = model.clone();
    for (i, vr) in reals.iter().enumerate() {
        if let Access::Real { set, .. } = vars[*vr].access {
            set(&mut marked, i as f64 + 0.5);
        }
    }
    let mut lifted = M::Jets::lift(&marked);
    let mut i = 0;
    lifted.visit(&mut |j| {
        let name = vars[reals[i]].name;
        assert_eq!(
            crate::Scalar::value(*j),
            i as f64 + 0.5,
            "{}: the lifted model's Real variable {i} is not {name}",
            M::NAME
        );
        i += 1;
    });
}

/// The jet at `offset` in `lifted`.
fn jet_at<M: Model>(lifted: &mut M::Jets, offset: usize) -> &mut JetOf<M> {
    assert!(offset != NONE, "no Real variable");
    // SAFETY: `offset` is where `visit` found a Real variable's jet inside a value of type
    // `M::Jets`, checked at construction to lie inside it; the jet is borrowed mutably through
    // the mutable borrow of `lifted`.
    unsafe { &mut *((lifted as *mut M::Jets as *mut u8).add(offset) as *mut JetOf<M>) }
}

/// An unknown whose derivative is not finite: what the call returns Discard for.
pub(crate) struct NotFinite {
    pub unknown: u32,
}

impl<M: Model> Instance<M> {
    /// The columns of every known after initialization at the current point, swept unless
    /// kept.
    pub(crate) fn continuous_columns(&mut self) -> Result<(), NotFinite> {
        if self.jacobian.valid {
            return Ok(());
        }
        let t = self.time;
        let j = &mut self.jacobian;
        if j.stale {
            j.clear();
            j.stale = false;
        }
        j.lifted.sync(&self.model);
        let (plan, unknowns) = (std::mem::take(&mut j.plan), std::mem::take(&mut j.unknowns));
        let lanes = <JetOf<M> as Lanes>::LANES;
        let width = plan.len();
        let mut result = Ok(());
        for (chunk, knowns) in plan.chunks(lanes).enumerate() {
            for (lane, k) in knowns.iter().enumerate() {
                j.jet(*k).eps_mut()[lane] = 1.0;
            }
            j.poison(&unknowns, knowns);
            j.lifted.outputs(t);
            for u in &unknowns {
                let row = *u as usize * width + chunk * lanes;
                let eps = jet_at::<M>(&mut j.lifted, j.offsets[*u as usize]).eps();
                j.values[row..row + knowns.len()].copy_from_slice(&eps[..knowns.len()]);
                if result.is_ok() && eps[..knowns.len()].iter().any(|e| !e.is_finite()) {
                    result = Err(NotFinite { unknown: *u });
                }
            }
            for k in knowns {
                j.jet(*k).eps_mut().fill(0.0);
            }
        }
        (j.plan, j.unknowns) = (plan, unknowns);
        j.valid = result.is_ok();
        result
    }

    /// The derivative of unknown `u` by known `k` from the columns kept.
    pub(crate) fn entry(&self, u: u32, k: u32) -> f64 {
        let j = &self.jacobian;
        j.values[u as usize * j.plan.len() + j.column[k as usize]]
    }

    /// In Initialization Mode: the unknowns moved along `directions` directions of the
    /// knowns, `seed(d, i)` the derivative of `knowns[i]` along direction `d`, one sweep
    /// through the start per chunk of lanes (the states that take a start parameter's value,
    /// the calculated parameters, the outputs); `write(i, d, value)` for `unknowns[i]`.
    pub(crate) fn initial_sweep(
        &mut self,
        unknowns: &[u32],
        knowns: &[u32],
        directions: usize,
        seed: impl Fn(usize, usize) -> f64,
        mut write: impl FnMut(usize, usize, f64),
    ) -> Result<(), NotFinite> {
        debug_assert_eq!(self.state, FmiState::InitializationMode);
        let t = self.time;
        let lanes = <JetOf<M> as Lanes>::LANES;
        let j = &mut self.jacobian;
        j.valid = false;
        j.stale = true;
        for first in (0..directions).step_by(lanes) {
            let width = lanes.min(directions - first);
            j.clear();
            j.lifted.sync(&self.model);
            for (i, k) in knowns.iter().enumerate() {
                let eps = j.jet(*k).eps_mut();
                for lane in 0..width {
                    eps[lane] += seed(first + lane, i);
                }
            }
            j.poison(unknowns, knowns);
            j.lifted.start_states();
            j.lifted.calculated(t);
            j.lifted.outputs(t);
            for (i, u) in unknowns.iter().enumerate() {
                let eps = j.jet(*u).eps();
                for lane in 0..width {
                    if !eps[lane].is_finite() {
                        return Err(NotFinite { unknown: *u });
                    }
                    write(i, first + lane, eps[lane]);
                }
            }
        }
        Ok(())
    }
}
