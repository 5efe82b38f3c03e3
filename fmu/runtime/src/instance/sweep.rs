//! The passes of a lifted model's equations over jets ([`super::jacobian`]): the columns of the
//! knowns after initialization, the outputs' motion, and the initial unknowns' directions.
//!
//! Before a pass the outputs it computes have their derivatives set to NaN, and the state
//! derivatives too: one the equations do not compute stays NaN, and the call returns Discard
//! naming it, as it does where the derivatives are not finite.

use super::jacobian::{jet_at, InitialJetOf, JetOf, NotFinite, INPUTS, OUTPUTS, RATES, STATES};
use super::{FmiState, Instance};
use crate::dual::Scalar;
use crate::jet::Lanes;
use crate::lift::{Equations, Lifted, UNSEEDED};
use crate::model::Model;

impl<M: Model> Instance<M> {
    /// The row groups `rows` by the column groups `columns` at the current point (after
    /// initialization), each swept once per point.
    #[inline]
    pub(crate) fn columns(&mut self, rows: u8, columns: u8) -> Result<(), NotFinite> {
        self.jacobian.begin_point();
        for (g, group) in [STATES, INPUTS].into_iter().enumerate() {
            let missing = rows & !self.jacobian.fresh[g];
            if columns & group != 0 && missing != 0 {
                self.sweep(group, missing)?;
                self.jacobian.fresh[g] |= missing;
            }
        }
        Ok(())
    }

    /// The lifted model at the current point: every derivative 0, the values the f64 model's
    /// (where only the states moved, theirs), but for the states' where `states_next` (the
    /// sweep of their columns seeds them, values included).
    #[inline(always)]
    fn at_point(&mut self, states_next: bool) {
        let j = &mut self.jacobian;
        j.begin_point();
        if !j.synced {
            j.lifted.sync(&self.model);
            j.synced = true;
        } else if j.only_states && !states_next {
            j.lifted.seed_states(&self.model, UNSEEDED);
        }
        j.only_states = false;
    }

    /// One pass per chunk of the column group's lanes, through the row groups asked for, its
    /// entries written into the columns kept; the first unknown whose value or derivatives
    /// are not finite, if any. The states' chunks are known at compile time: their loop
    /// unrolls (most models need one chunk).
    #[cold]
    fn sweep(&mut self, columns: u8, rows_asked: u8) -> Result<(), NotFinite> {
        self.sweep_here(columns, rows_asked)
    }

    /// The state derivatives' rows by the states' columns at a new point, as an importer's
    /// first call there asks: [`Instance::columns`] with the sweep in the caller's frame.
    #[inline(always)]
    pub(crate) fn rates_by_states(&mut self) -> Result<(), NotFinite> {
        self.jacobian.begin_point();
        if self.jacobian.fresh[0] & RATES == 0 {
            self.sweep_here(STATES, RATES)?;
            self.jacobian.fresh[0] |= RATES;
        }
        Ok(())
    }

    /// [`Instance::sweep`], inlined where it is called.
    #[inline(always)]
    fn sweep_here(&mut self, columns: u8, rows_asked: u8) -> Result<(), NotFinite> {
        self.at_point(columns == STATES);
        let lanes = <JetOf<M> as Lanes>::LANES;
        let mut bad = None;
        if columns == STATES {
            for chunk in 0..M::STATES.div_ceil(lanes) {
                let known = chunk * lanes..M::STATES.min((chunk + 1) * lanes);
                bad = bad.or(self.sweep_chunk(chunk, known, rows_asked));
            }
        } else {
            let (first, end) = (self.jacobian.inputs_from, self.jacobian.plan.len());
            let chunks = self.jacobian.state_chunks..;
            for (chunk, from) in chunks.zip((first..end).step_by(lanes)) {
                let known = from..end.min(from + lanes);
                bad = bad.or(self.sweep_chunk(chunk, known, rows_asked));
            }
        }
        match bad {
            None => Ok(()),
            Some(row) => {
                self.jacobian.valid = false;
                Err(NotFinite {
                    unknown: self.jacobian.unknown_of_row[row],
                })
            }
        }
    }

    /// One pass for the knowns of the plan's columns `known`, kept as chunk `chunk`: the first
    /// row whose value or derivatives are not finite, if any.
    #[inline(always)]
    fn sweep_chunk(
        &mut self,
        chunk: usize,
        known: std::ops::Range<usize>,
        rows_asked: u8,
    ) -> Option<usize> {
        let t = self.time;
        let j = &mut self.jacobian;
        let (rows, n) = (j.rows, M::STATES);
        // The states' columns: the states seeded, values with them; the inputs': by offset.
        let states = known.start < n;
        if states {
            j.lifted.seed_states(&self.model, known.start);
        } else {
            for (lane, c) in known.clone().enumerate() {
                jet_at::<M, _>(&mut j.lifted, j.plan_offsets[c]).eps_mut()[lane] = 1.0;
            }
        }
        let block = &mut j.values[chunk * rows..(chunk + 1) * rows];
        let mut bad = None;
        if rows_asked & RATES != 0 {
            let rates = &mut block[..n];
            rates.fill(JetOf::<M>::constant(f64::NAN));
            j.lifted.derivatives(t, rates);
            bad = not_finite(rates);
        }
        if rows_asked & OUTPUTS != 0 {
            for offset in &j.poisoned {
                jet_at::<M, _>(&mut j.lifted, *offset)
                    .eps_mut()
                    .fill(f64::NAN);
            }
            j.lifted.outputs(t);
            for (x, offset) in block[n..].iter_mut().zip(&j.output_offsets) {
                *x = *jet_at::<M, _>(&mut j.lifted, *offset);
            }
            bad = bad.or_else(|| not_finite(&block[n..]).map(|r| n + r));
        }
        if states {
            j.lifted.seed_states(&self.model, UNSEEDED);
        } else {
            for c in known {
                jet_at::<M, _>(&mut j.lifted, j.plan_offsets[c])
                    .eps_mut()
                    .fill(0.0);
            }
        }
        bad
    }

    /// The Real outputs `vrs` moving along the model's motion: lane 0 of one pass of the
    /// outputs, the states seeded with their derivatives and the inputs with the input
    /// derivatives set. A discrete output: 0.
    pub(crate) fn along_motion(
        &mut self,
        vrs: &[u32],
        values: &mut [f64],
    ) -> Result<(), NotFinite> {
        let t = self.time;
        self.at_point(false);
        let j = &mut self.jacobian;
        self.model.derivatives(t, &mut j.rates_f64);
        for (c, k) in j.plan.iter().enumerate() {
            let slope = if c < j.inputs_from {
                j.rates_f64[c]
            } else {
                self.slopes[*k as usize]
            };
            jet_at::<M, _>(&mut j.lifted, j.plan_offsets[c]).eps_mut()[0] = slope;
        }
        for offset in &j.poisoned {
            jet_at::<M, _>(&mut j.lifted, *offset)
                .eps_mut()
                .fill(f64::NAN);
        }
        j.lifted.outputs(t);
        let mut result = Ok(());
        for (vr, value) in vrs.iter().zip(values.iter_mut()) {
            *value = match self.vars[*vr as usize].variability {
                crate::Variability::Continuous => {
                    jet_at::<M, _>(&mut j.lifted, j.offsets[*vr as usize]).eps()[0]
                }
                _ => 0.0,
            };
            if !value.is_finite() && result.is_ok() {
                result = Err(NotFinite { unknown: *vr });
            }
        }
        for c in 0..j.plan.len() {
            jet_at::<M, _>(&mut j.lifted, j.plan_offsets[c]).eps_mut()[0] = 0.0;
        }
        result
    }

    /// In Initialization Mode: the unknowns moved along `directions` directions of the
    /// knowns, `seed(d, i)` the derivative of `knowns[i]` along direction `d`, one pass through
    /// the start per chunk of lanes (the states that take a start parameter's value, the
    /// calculated parameters, the outputs); `write(i, d, value)` for `unknowns[i]`.
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
        let lanes = <InitialJetOf<M> as Lanes>::LANES;
        let j = &mut self.jacobian;
        (j.valid, j.only_states) = (false, false);
        for first in (0..directions).step_by(lanes) {
            let width = lanes.min(directions - first);
            j.clear_initial();
            j.initial.sync(&self.model);
            for (i, k) in knowns.iter().enumerate() {
                let eps = jet_at::<M, _>(&mut j.initial, j.initial_offsets[*k as usize]).eps_mut();
                for (lane, e) in eps.iter_mut().enumerate().take(width) {
                    *e += seed(first + lane, i);
                }
            }
            for u in unknowns.iter().filter(|u| !knowns.contains(u)) {
                jet_at::<M, _>(&mut j.initial, j.initial_offsets[*u as usize])
                    .eps_mut()
                    .fill(f64::NAN);
            }
            j.initial.start_states();
            j.initial.calculated(t);
            j.initial.outputs(t);
            for (i, u) in unknowns.iter().enumerate() {
                let eps = jet_at::<M, _>(&mut j.initial, j.initial_offsets[*u as usize]).eps();
                for (lane, e) in eps.iter().enumerate().take(width) {
                    if !e.is_finite() {
                        return Err(NotFinite { unknown: *u });
                    }
                    write(i, first + lane, *e);
                }
            }
        }
        Ok(())
    }
}

/// The first of `xs` whose value or a derivative is not finite: one sum of them all, then,
/// only if it is not finite, a look at each (an overflowing sum of finite ones finds none).
#[inline(always)]
fn not_finite<J: Lanes>(xs: &[J]) -> Option<usize> {
    let sum: f64 = xs
        .iter()
        .map(|x| x.value() + x.eps().iter().sum::<f64>())
        .sum();
    if sum.is_finite() {
        return None;
    }
    xs.iter()
        .position(|x| !(x.value().is_finite() && x.eps().iter().all(|e| e.is_finite())))
}
