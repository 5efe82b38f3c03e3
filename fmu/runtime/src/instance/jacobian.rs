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
use crate::dual::Scalar;
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
    /// The knowns after initialization (the states and the continuous inputs, FMI 2.0.4
    /// section 2.2.8), the states first: column `c` is `plan[c]`.
    plan: Vec<u32>,
    /// The first input's column: the states' columns and the inputs' are swept apart, each
    /// when first asked for (a Model Exchange importer asks for the states' alone).
    inputs_from: usize,
    /// By value reference: its column (NONE: not a known after initialization).
    column: Vec<usize>,
    /// The unknowns after initialization in every mode, with their jets' offsets.
    unknowns: Vec<u32>,
    unknown_offsets: Vec<usize>,
    /// By value reference: its row among `unknowns` (NONE: none).
    row: Vec<usize>,
    /// The offsets of the unknowns that are no knowns: NaN before each sweep.
    poisoned: Vec<usize>,
    /// By value reference: what it may be after initialization (UNKNOWN, DISCRETE, KNOWN).
    role: Vec<u8>,
    /// `values[row * plan.len() + c]`: the derivative of an unknown by known `plan[c]`.
    values: Vec<f64>,
    /// Whether anything below holds the current point; cleared by every change of a value.
    pub(crate) valid: bool,
    /// Which column groups hold the current point (bit 0: states, bit 1: inputs), and
    /// whether `lifted` holds its values.
    fresh: u8,
    synced: bool,
    /// An Initialization Mode sweep left derivatives in the parameters' jets: clear them all
    /// before the next sweep after it.
    stale: bool,
    /// The state derivatives, for the outputs' motion.
    rates: Vec<f64>,
}

const UNKNOWN: u8 = 1;
const DISCRETE: u8 = 2;
const KNOWN: u8 = 4;

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
        let all = 0..vars.len() as u32;
        let mut plan: Vec<u32> = all
            .clone()
            .filter(|i| vars[*i as usize].derivative.is_some())
            .collect();
        let inputs_from = plan.len();
        plan.extend(all.clone().filter(|i| continuous_input(&vars[*i as usize])));
        let mut column = vec![NONE; vars.len()];
        let mut role = vec![0u8; vars.len()];
        for (c, k) in plan.iter().enumerate() {
            column[*k as usize] = c;
            role[*k as usize] |= KNOWN;
        }
        let unknowns: Vec<u32> = all
            .filter(|i| continuous_unknown(&vars[*i as usize]))
            .collect();
        let mut row = vec![NONE; vars.len()];
        for (r, u) in unknowns.iter().enumerate() {
            row[*u as usize] = r;
            role[*u as usize] |= UNKNOWN;
        }
        for (vr, v) in vars.iter().enumerate() {
            if v.is_real() && v.causality == Causality::Output {
                role[vr] |= DISCRETE;
            }
        }
        let unknown_offsets = unknowns.iter().map(|u| offsets[*u as usize]).collect();
        let poisoned = unknowns
            .iter()
            .filter(|u| column[**u as usize] == NONE)
            .map(|u| offsets[*u as usize])
            .collect();
        Jacobian {
            lifted,
            offsets,
            values: vec![0.0; unknowns.len() * plan.len()],
            plan,
            inputs_from,
            column,
            unknowns,
            unknown_offsets,
            row,
            poisoned,
            role,
            valid: false,
            fresh: 0,
            synced: false,
            stale: false,
            rates: vec![0.0; M::STATES],
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

    /// Whether these may be asked for after initialization, in Continuous-Time Mode or not:
    /// the quick check of every call there (the request check names what is refused).
    pub(crate) fn admits(&self, unknowns: &[u32], knowns: &[u32], continuous_time: bool) -> bool {
        let wanted = if continuous_time {
            UNKNOWN
        } else {
            UNKNOWN | DISCRETE
        };
        unknowns
            .iter()
            .all(|u| self.role.get(*u as usize).is_some_and(|r| r & wanted != 0))
            && knowns
                .iter()
                .all(|k| self.role.get(*k as usize).is_some_and(|r| r & KNOWN != 0))
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
            j.value(),
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
    /// The columns of `knowns` (all after initialization) at the current point: the states'
    /// and the inputs' column groups, each swept once per point when first asked for.
    pub(crate) fn columns(&mut self, knowns: &[u32]) -> Result<(), NotFinite> {
        let j = &mut self.jacobian;
        if !j.valid {
            (j.valid, j.fresh, j.synced) = (true, 0, false);
        }
        let mut wanted = 0;
        for k in knowns {
            wanted |= if j.column[*k as usize] < j.inputs_from {
                1
            } else {
                2
            };
        }
        let groups = [(1, 0..j.inputs_from), (2, j.inputs_from..j.plan.len())];
        for (group, columns) in groups {
            if wanted & group != 0 && self.jacobian.fresh & group == 0 {
                self.sweep(columns)?;
                self.jacobian.fresh |= group;
            }
        }
        Ok(())
    }

    /// One pass of the equations over jets per chunk of `columns`.
    fn sweep(&mut self, columns: std::ops::Range<usize>) -> Result<(), NotFinite> {
        let t = self.time;
        let j = &mut self.jacobian;
        if j.stale {
            j.clear();
            j.stale = false;
        }
        if !j.synced {
            j.lifted.sync(&self.model);
            j.synced = true;
        }
        let (lanes, width) = (<JetOf<M> as Lanes>::LANES, j.plan.len());
        // 0 while every value and derivative is finite, NaN otherwise.
        let mut zero = 0.0;
        for first in columns.clone().step_by(lanes) {
            let chunk = first..columns.end.min(first + lanes);
            for (lane, c) in chunk.clone().enumerate() {
                let offset = j.offsets[j.plan[c] as usize];
                jet_at::<M>(&mut j.lifted, offset).eps_mut()[lane] = 1.0;
            }
            for offset in &j.poisoned {
                jet_at::<M>(&mut j.lifted, *offset).eps_mut().fill(f64::NAN);
            }
            j.lifted.outputs(t);
            for (r, offset) in j.unknown_offsets.iter().enumerate() {
                let x = jet_at::<M>(&mut j.lifted, *offset);
                zero += x.value() * 0.0;
                let to = &mut j.values[r * width + chunk.start..r * width + chunk.end];
                for (to, e) in to.iter_mut().zip(x.eps()) {
                    *to = *e;
                    zero += e * 0.0;
                }
            }
            for c in chunk {
                let offset = j.offsets[j.plan[c] as usize];
                jet_at::<M>(&mut j.lifted, offset).eps_mut().fill(0.0);
            }
        }
        if zero == 0.0 {
            return Ok(());
        }
        j.valid = false;
        let bad = j.unknown_offsets.iter().position(|o| {
            let x = jet_at::<M>(&mut j.lifted, *o);
            !x.value().is_finite() || x.eps().iter().any(|e| !e.is_finite())
        });
        Err(NotFinite {
            unknown: j.unknowns[bad.unwrap_or(0)],
        })
    }

    /// The Real outputs `vrs` moving along the model's motion: lane 0 of one sweep, the states
    /// seeded with their derivatives and the inputs with the input derivatives set.
    pub(crate) fn along_motion(
        &mut self,
        vrs: &[u32],
        values: &mut [f64],
    ) -> Result<(), NotFinite> {
        let t = self.time;
        let j = &mut self.jacobian;
        if !j.valid {
            (j.valid, j.fresh, j.synced) = (true, 0, false);
        }
        if j.stale {
            j.clear();
            j.stale = false;
        }
        if !j.synced {
            j.lifted.sync(&self.model);
            j.synced = true;
        }
        self.model.derivatives(t, &mut j.rates);
        for (c, k) in j.plan.iter().enumerate() {
            let slope = if c < j.inputs_from {
                j.rates[c]
            } else {
                self.slopes[*k as usize]
            };
            jet_at::<M>(&mut j.lifted, j.offsets[*k as usize]).eps_mut()[0] = slope;
        }
        for offset in &j.poisoned {
            jet_at::<M>(&mut j.lifted, *offset).eps_mut().fill(f64::NAN);
        }
        j.lifted.outputs(t);
        let mut result = Ok(());
        for (vr, value) in vrs.iter().zip(values.iter_mut()) {
            *value = match j.offsets[*vr as usize] {
                offset if j.row[*vr as usize] != NONE => {
                    jet_at::<M>(&mut j.lifted, offset).eps()[0]
                }
                _ => 0.0,
            };
            if !value.is_finite() && result.is_ok() {
                result = Err(NotFinite { unknown: *vr });
            }
        }
        for k in &j.plan {
            jet_at::<M>(&mut j.lifted, j.offsets[*k as usize]).eps_mut()[0] = 0.0;
        }
        result
    }

    /// The derivative of unknown `u` by known `k` (after [`Instance::columns`]); 0 for a
    /// discrete output.
    #[inline]
    pub(crate) fn entry(&self, u: u32, k: u32) -> f64 {
        let j = &self.jacobian;
        match j.row[u as usize] {
            NONE => 0.0,
            r => j.values[r * j.plan.len() + j.column[k as usize]],
        }
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
            for u in unknowns.iter().filter(|u| !knowns.contains(u)) {
                j.jet(*u).eps_mut().fill(f64::NAN);
            }
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
