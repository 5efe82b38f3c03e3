//! The Jacobian of a model written over the number type ([`crate::lift`]): the model lifted to
//! jets once at instantiation; at each point its equations run over them for the knowns asked
//! about, in chunks of the jet's lanes ([`super::sweep`]).
//!
//! After Initialization Mode the knowns are the same at every point (the states and the
//! continuous inputs), so the first derivative call at a point sweeps a whole group of them and
//! keeps its columns; the other calls at that point (one unit seed per state, as CVode and
//! Rosenbrock importers ask, a seed over several, or the adjoint) are answered from the
//! columns kept, until a value or the time changes. The columns come in groups, each swept when
//! first asked for: the states' and the inputs'; and the rows too: the state derivatives (from
//! the model's `derivatives` over jets, what a Model Exchange importer asks for) and the other
//! outputs (from its `outputs`). No model is cloned and nothing allocates after instantiation.

use crate::dual::Scalar;
use crate::jet::Lanes;
use crate::lift::{Jets, Lifted};
use crate::model::Model;
use crate::variables::{Causality, Var, Variability};

pub(crate) use super::places::{jet_at, places};

pub(crate) type JetOf<M> = <<M as Model>::Jets as Lifted<M>>::Jet;
/// Initialization Mode's lifted model, its parameters moving too.
pub(crate) type InitialOf<M> = <<M as Model>::Jets as Jets<M>>::Initial;
pub(crate) type InitialJetOf<M> = <InitialOf<M> as Lifted<M>>::Jet;

/// No offset, no row.
pub(crate) const NONE: usize = usize::MAX;

/// What a variable may be after initialization (bits of [`Jacobian::role`]): an unknown of
/// the state derivatives' rows or of the outputs', a Real output (discrete ones are unknowns
/// outside Continuous-Time Mode), a known of the states' columns or of the inputs'.
const UNKNOWN_RATE: u8 = 1;
const UNKNOWN_OUTPUT: u8 = 2;
const OUTPUT: u8 = 4;
const KNOWN_STATE: u8 = 8;
const KNOWN_INPUT: u8 = 16;

/// Row groups and column groups (bits of [`Jacobian::fresh`]): the state derivatives' rows
/// and the outputs', by the states' columns and the inputs'.
pub(crate) const RATES: u8 = 1;
pub(crate) const OUTPUTS: u8 = 2;
pub(crate) const STATES: u8 = 1;
pub(crate) const INPUTS: u8 = 2;

/// Where a known's column is kept: its chunk's first entry in `Jacobian::values`, its lane
/// there, and its column group (0 the states', 1 the inputs').
#[derive(Clone, Copy)]
struct Place {
    start: usize,
    lane: usize,
    group: usize,
}

pub(crate) struct Jacobian<M: Model> {
    /// The model lifted for the derivatives after initialization: its parameters plain f64.
    pub(crate) lifted: M::Jets,
    /// By value reference: the byte offset of the variable's jet in `lifted` (NONE: not Real,
    /// or a parameter held as an f64).
    pub(crate) offsets: Vec<usize>,
    /// The model lifted for Initialization Mode, where the parameters are knowns too.
    pub(crate) initial: InitialOf<M>,
    /// By value reference: the byte offset of the variable's jet in `initial`.
    pub(crate) initial_offsets: Vec<usize>,
    /// The knowns after initialization (the states and the continuous inputs, FMI 2.0.4
    /// section 2.2.8): column `c` is `plan[c]`, the states first, in the state vector's order.
    pub(crate) plan: Vec<u32>,
    pub(crate) plan_offsets: Vec<usize>,
    /// The first input's column.
    pub(crate) inputs_from: usize,
    /// By value reference: where its column is kept (None for no known).
    place_of: Vec<Option<Place>>,
    /// The chunks of the states' columns, then the inputs': how many of the states.
    pub(crate) state_chunks: usize,
    /// By value reference: its row (NONE for no unknown after initialization). The state
    /// derivatives' rows come first, in the state vector's order, then the outputs'.
    row_of: Vec<usize>,
    /// How many rows: the states', then the other outputs'.
    pub(crate) rows: usize,
    /// By row: its unknown's value reference.
    pub(crate) unknown_of_row: Vec<u32>,
    /// The other outputs' rows, from `STATES` on: their unknowns' offsets.
    pub(crate) output_offsets: Vec<usize>,
    /// The offsets of the outputs that are no knowns: NaN before each sweep of the outputs.
    pub(crate) poisoned: Vec<usize>,
    /// By value reference: what it may be after initialization.
    role: Vec<u8>,
    /// `values[chunk * rows + row]`: the derivatives of row's unknown by the chunk's knowns,
    /// a chunk's rows side by side (the model's derivatives over jets are written there).
    pub(crate) values: Vec<JetOf<M>>,
    /// By the row groups swept (`fresh`'s bits): the rows that hold the current point's
    /// entries, as a range (the state derivatives' rows, the outputs', or all).
    spans: [(usize, usize); 4],
    /// The state derivatives in f64, for the outputs' motion.
    pub(crate) rates_f64: Vec<f64>,
    /// Whether `fresh` and `synced` hold the current point; cleared by every change of a value.
    pub(crate) valid: bool,
    /// For each column group (STATES, INPUTS), the row groups (RATES, OUTPUTS) swept at the
    /// current point.
    pub(crate) fresh: [u8; 2],
    /// `lifted` holds the current point's values.
    pub(crate) synced: bool,
    /// Since `lifted` was last synced, only the states have changed (fmi2SetContinuousStates
    /// between an integrator's points): the next sync writes their values only.
    pub(crate) only_states: bool,
}

impl<M: Model> Jacobian<M> {
    pub(crate) fn new(model: &M, vars: &[Var<M>]) -> Self {
        let mut lifted = M::Jets::lift(model);
        let mut initial = InitialOf::<M>::lift(model);
        let (offsets, initial_offsets) = if <M::Jets as Lifted<M>>::LIFTED {
            (places(&mut lifted, vars), places(&mut initial, vars))
        } else {
            (vec![NONE; vars.len()], vec![NONE; vars.len()])
        };
        let all = 0..vars.len() as u32;
        let states: Vec<u32> = all
            .clone()
            .filter(|i| vars[*i as usize].derivative.is_some())
            .collect();
        let inputs: Vec<u32> = all
            .clone()
            .filter(|i| continuous_input(&vars[*i as usize]))
            .collect();
        let mut role = vec![0u8; vars.len()];
        for (group, bit) in [(&states, KNOWN_STATE), (&inputs, KNOWN_INPUT)] {
            for k in group {
                role[*k as usize] |= bit;
            }
        }
        let mut row = vec![NONE; vars.len()];
        for (r, s) in states.iter().enumerate() {
            let name = vars[*s as usize].derivative;
            let d = vars
                .iter()
                .position(|v| Some(v.name) == name)
                .expect("a declared derivative");
            row[d] = r;
        }
        let mut output_offsets = Vec::new();
        for (vr, v) in vars.iter().enumerate() {
            if continuous_unknown(v) {
                role[vr] |= if row[vr] == NONE {
                    UNKNOWN_OUTPUT
                } else {
                    UNKNOWN_RATE
                };
                if row[vr] == NONE {
                    row[vr] = states.len() + output_offsets.len();
                    output_offsets.push(offsets[vr]);
                }
            }
            if v.is_real() && v.causality == Causality::Output {
                role[vr] |= OUTPUT;
            }
        }
        let poisoned = (0..vars.len())
            .filter(|vr| {
                row[*vr] >= states.len()
                    && row[*vr] != NONE
                    && role[*vr] & (KNOWN_STATE | KNOWN_INPUT) == 0
            })
            .map(|vr| offsets[vr])
            .collect();
        let rows = states.len() + output_offsets.len();
        let mut unknown_of_row = vec![0; rows];
        for (vr, r) in row.iter().enumerate().filter(|(_, r)| **r != NONE) {
            unknown_of_row[*r] = vr as u32;
        }
        let inputs_from = states.len();
        // The sweep counts the states' columns at compile time.
        assert!(
            !<M::Jets as Lifted<M>>::LIFTED || inputs_from == M::STATES,
            "{}: {inputs_from} states declared, {} counted",
            M::NAME,
            M::STATES
        );
        let plan: Vec<u32> = states.into_iter().chain(inputs).collect();
        let lanes = <JetOf<M> as crate::jet::Lanes>::LANES;
        let state_chunks = inputs_from.div_ceil(lanes);
        let mut place_of = vec![None; vars.len()];
        for (c, k) in plan.iter().enumerate() {
            let (chunk, lane, group) = match c.checked_sub(inputs_from) {
                None => (c / lanes, c % lanes, 0),
                Some(i) => (state_chunks + i / lanes, i % lanes, 1),
            };
            let start = chunk * rows;
            place_of[*k as usize] = Some(Place { start, lane, group });
        }
        let chunks = state_chunks + (plan.len() - inputs_from).div_ceil(lanes);
        let (n, all) = (inputs_from, rows);
        Jacobian {
            lifted,
            plan_offsets: plan.iter().map(|k| offsets[*k as usize]).collect(),
            offsets,
            initial,
            initial_offsets,
            plan,
            inputs_from,
            place_of,
            state_chunks,
            row_of: row,
            rows,
            unknown_of_row,
            output_offsets,
            poisoned,
            role,
            values: vec![JetOf::<M>::constant(0.0); rows * chunks],
            spans: [(0, 0), (0, n), (n, all), (0, all)],
            rates_f64: vec![0.0; M::STATES],
            valid: false,
            fresh: [0; 2],
            synced: false,
            only_states: false,
        }
    }

    /// After initialization, in Continuous-Time Mode or not: whether these may be asked for
    /// (the quick check of every call there; the request check names what is refused), and
    /// then the row groups (RATES, OUTPUTS) and column groups (STATES, INPUTS) they need.
    #[inline]
    pub(crate) fn request(
        &self,
        unknowns: &[u32],
        knowns: &[u32],
        continuous_time: bool,
    ) -> Option<(u8, u8)> {
        let wanted = if continuous_time {
            UNKNOWN_RATE | UNKNOWN_OUTPUT
        } else {
            UNKNOWN_RATE | UNKNOWN_OUTPUT | OUTPUT
        };
        let (mut rows, mut columns) = (0, 0);
        for u in unknowns {
            let r = *self.role.get(*u as usize)?;
            if r & wanted == 0 {
                return None;
            }
            rows |= r & (UNKNOWN_RATE | UNKNOWN_OUTPUT);
        }
        for k in knowns {
            let r = *self.role.get(*k as usize)?;
            if r & (KNOWN_STATE | KNOWN_INPUT) == 0 {
                return None;
            }
            columns |= r >> 3;
        }
        Some((rows, columns))
    }

    /// The row group of the first unknown and the column group of the first known, after
    /// initialization in Continuous-Time Mode; None if either has none.
    #[inline(always)]
    pub(crate) fn groups_of(&self, unknowns: &[u32], knowns: &[u32]) -> Option<(u8, u8)> {
        let role = |vr: Option<&u32>| vr.and_then(|v| self.role.get(*v as usize)).copied();
        let rows = role(unknowns.first())? & (UNKNOWN_RATE | UNKNOWN_OUTPUT);
        let columns = role(knowns.first())? >> 3;
        (rows != 0 && columns != 0).then_some((rows, columns))
    }

    /// `sensitivity = J seed` from the columns kept (after a sweep of the groups `request`
    /// named): [`Jacobian::swept`], or entry by entry where it cannot answer (a discrete
    /// output, a seed of zeros).
    pub(crate) fn directional(
        &self,
        unknowns: &[u32],
        knowns: &[u32],
        seed: &[f64],
        sensitivity: &mut [f64],
    ) {
        if self.swept(unknowns, knowns, seed, sensitivity) {
            return;
        }
        for (u, s) in unknowns.iter().zip(sensitivity.iter_mut()) {
            *s = knowns
                .iter()
                .zip(seed)
                .map(|(k, v)| self.entry(*u, *k) * v)
                .sum();
        }
    }

    /// `sensitivity = J seed` where every entry it needs was swept at this point: whether it
    /// was (if not, `sensitivity` holds nothing to use). One known, as CVode and Rosenbrock
    /// importers ask a column: its column found once, then one read per unknown; several: a
    /// unit seed over them is its known's column, other seeds one read per unknown and known
    /// seeded with other than 0. The reads check the roles too: a known has a
    /// column, an unknown after initialization a row (a discrete output has none). Nothing can
    /// panic: every read is checked.
    #[inline(always)]
    pub(crate) fn swept(
        &self,
        unknowns: &[u32],
        knowns: &[u32],
        seed: &[f64],
        sensitivity: &mut [f64],
    ) -> bool {
        if !self.valid {
            return false;
        }
        if let ([k], [v]) = (knowns, seed) {
            return self.column_times(unknowns, *k, *v, sensitivity);
        }
        // Every state in the plan's order, as an importer seeds them all: compared, and the
        // seed's entries other than 0 (NaN too) found, in one loop the state count unrolls; a
        // unit seed is then its known's column.
        let n = M::STATES;
        if let (true, Some(plan)) = (
            knowns.len() == n && seed.len() == n && n <= 64,
            self.plan.get(..n),
        ) {
            let (mut differ, mut mask) = (0, 0u64);
            for i in 0..n {
                differ |= knowns[i] ^ plan[i];
                mask |= u64::from(seed[i] != 0.0) << i;
            }
            if differ == 0 && mask.is_power_of_two() {
                let only = mask.trailing_zeros() as usize;
                let Some(column) = self.state_column(only) else {
                    return false;
                };
                return self.read_column(unknowns, column, seed[only], sensitivity);
            }
        }
        // Several knowns: each checked to be one (the role table held in a local, so that the
        // loop reads it from registers); a seed with one entry other than 0 (a unit seed over
        // every state) is that known's column, found by two scans that end at an entry other
        // than 0.
        let role = self.role.as_slice();
        let known = |k: &u32| role.get(*k as usize).map_or(0, |r| *r) & (KNOWN_STATE | KNOWN_INPUT);
        if knowns.len() != seed.len() || !knowns.iter().all(|k| known(k) != 0) {
            return false;
        }
        // Other than +-0 (NaN too), compared as bits.
        let nonzero = |v: &f64| v.to_bits() << 1 != 0;
        let mut only = 0;
        while only < seed.len() && !nonzero(&seed[only]) {
            only += 1;
        }
        // A seed of zeros: the unknowns are checked by the full path.
        let (Some(k), Some(v)) = (knowns.get(only), seed.get(only)) else {
            return false;
        };
        if !seed[only + 1..].iter().any(nonzero) {
            return self.column_times(unknowns, *k, *v, sensitivity);
        }
        for (u, s) in unknowns.iter().zip(sensitivity.iter_mut()) {
            let r = self.row(*u);
            let mut sum = 0.0;
            for (k, v) in knowns.iter().zip(seed).filter(|(_, v)| nonzero(v)) {
                match self.swept_column(*k).and_then(|c| read::<M>(c, r)) {
                    Some(x) => sum += x * v,
                    None => return false,
                }
            }
            *s = sum;
        }
        true
    }

    /// `sensitivity = v dy/dk` for `unknowns` y from known `k`'s column swept at this point:
    /// whether each was there.
    #[inline(always)]
    fn column_times(&self, unknowns: &[u32], k: u32, v: f64, sensitivity: &mut [f64]) -> bool {
        let Some(column) = self.swept_column(k) else {
            return false;
        };
        self.read_column(unknowns, column, v, sensitivity)
    }

    /// `sensitivity = v dy/dk` for `unknowns` y from `column`: the state derivatives in their
    /// order, as a Model Exchange importer asks for them, in one loop the state count unrolls;
    /// other rows in the order swept from three on ([`Jacobian::rows_in_order`]); else one
    /// lookup each.
    #[inline(always)]
    fn read_column(
        &self,
        unknowns: &[u32],
        column: Column<'_, M>,
        v: f64,
        sensitivity: &mut [f64],
    ) -> bool {
        let n = unknowns.len();
        let in_order = if n == M::STATES {
            self.rows_in_order(M::STATES, unknowns, column, v, sensitivity)
        } else {
            // Below three unknowns the loop costs more than the lookups it saves.
            n >= 3 && self.rows_in_order(n, unknowns, column, v, sensitivity)
        };
        in_order || self.read_rows(unknowns, column, v, sensitivity)
    }

    /// `sensitivity = v dy/dk` from `column`, one checked read per unknown.
    #[inline(always)]
    fn read_rows(
        &self,
        unknowns: &[u32],
        column: Column<'_, M>,
        v: f64,
        sensitivity: &mut [f64],
    ) -> bool {
        for (u, s) in unknowns.iter().zip(sensitivity.iter_mut()) {
            match read::<M>(column, self.row(*u)) {
                Some(x) => *s = x * v,
                None => return false,
            }
        }
        true
    }

    /// `sensitivity = v dy/dk` where the `n` unknowns are the rows swept in their order from
    /// the first (the state derivatives, as a Model Exchange importer asks for them): one read
    /// per unknown, its value reference compared without a branch. Whether they were. The
    /// rows, the unknowns they hold and the sensitivities are taken as slices of length `n`,
    /// so the loop reads them unchecked (and unrolls where `n` is a constant).
    #[inline(always)]
    fn rows_in_order(
        &self,
        n: usize,
        unknowns: &[u32],
        (rows, first, lane): Column<'_, M>,
        v: f64,
        sensitivity: &mut [f64],
    ) -> bool {
        let (Some(unknowns), Some(rows), Some(want), Some(out)) = (
            unknowns.get(..n),
            rows.get(..n),
            self.unknown_of_row.get(..n),
            sensitivity.get_mut(..n),
        ) else {
            return false;
        };
        if first != 0 || lane >= <JetOf<M> as Lanes>::LANES {
            return false;
        }
        let mut differ = 0;
        for i in 0..n {
            differ |= unknowns[i] ^ want[i];
            out[i] = rows[i].eps()[lane] * v;
        }
        differ == 0 && n == unknowns.len() && n == sensitivity.len()
    }

    /// Known `k`'s chunk, its rows swept at this point, the first of them and `k`'s lane there;
    /// None for no known after initialization.
    #[inline(always)]
    fn swept_column(&self, k: u32) -> Option<Column<'_, M>> {
        let p = (*self.place_of.get(k as usize)?)?;
        let (first, end) = self.spans[usize::from(self.fresh[p.group & 1] & 3)];
        Some((
            self.values.get(p.start + first..p.start + end)?,
            first,
            p.lane,
        ))
    }

    /// [`Jacobian::swept_column`] of the state in column `c` of the plan (`c` below the
    /// states' count), found from `c` alone.
    #[inline(always)]
    fn state_column(&self, c: usize) -> Option<Column<'_, M>> {
        let lanes = <JetOf<M> as Lanes>::LANES;
        let start = c / lanes * self.rows;
        let (first, end) = self.spans[usize::from(self.fresh[0] & 3)];
        Some((
            self.values.get(start + first..start + end)?,
            first,
            c % lanes,
        ))
    }

    /// Unknown `u`'s row (NONE for none: no read finds it).
    #[inline(always)]
    fn row(&self, u: u32) -> usize {
        self.row_of.get(u as usize).map_or(NONE, |r| *r)
    }

    /// The derivative of unknown `u` by known `k` (after a sweep of their groups); 0 for a
    /// discrete output. Read without a panic: the indices are in bounds by construction, and
    /// NaN would show one that is not.
    pub(crate) fn entry(&self, u: u32, k: u32) -> f64 {
        match self.row(u) {
            NONE => 0.0,
            r => self
                .swept_column(k)
                .and_then(|c| read::<M>(c, r))
                .unwrap_or(f64::NAN),
        }
    }

    /// Whether the row groups `rows` of the column groups `columns` are yet to be swept at
    /// this point.
    #[inline(always)]
    pub(crate) fn missing(&self, rows: u8, columns: u8) -> bool {
        (columns & STATES != 0 && rows & !self.fresh[0] != 0)
            || (columns & INPUTS != 0 && rows & !self.fresh[1] != 0)
    }

    /// A value other than the states changed: the columns kept and the lifted model are stale.
    #[inline(always)]
    pub(crate) fn changed(&mut self) {
        (self.valid, self.only_states) = (false, false);
    }

    /// The states changed: the columns kept are stale, and of the lifted model's values only
    /// the states', unless more had changed before.
    #[inline(always)]
    pub(crate) fn states_changed(&mut self) {
        self.only_states |= self.valid;
        self.valid = false;
    }

    /// A new point: no columns kept; the lifted model is to be synced (states only, if they
    /// are all that changed).
    #[inline(always)]
    pub(crate) fn begin_point(&mut self) {
        if !self.valid {
            (self.valid, self.fresh) = (true, [0; 2]);
            self.synced &= self.only_states;
        }
    }

    /// Every derivative in Initialization Mode's lifted model 0.
    pub(crate) fn clear_initial(&mut self) {
        for offset in self.initial_offsets.iter().filter(|o| **o != NONE) {
            jet_at::<M, _>(&mut self.initial, *offset)
                .eps_mut()
                .fill(0.0);
        }
    }
}

/// A known's column as [`Jacobian::swept_column`] finds it: the rows swept at this point, the
/// first of them, and the known's lane.
type Column<'a, M> = (&'a [JetOf<M>], usize, usize);

/// Row `row`'s entry in `column`, if it was swept.
#[inline(always)]
fn read<M: Model>((rows, first, lane): Column<'_, M>, row: usize) -> Option<f64> {
    let x = rows.get(row.wrapping_sub(first))?;
    x.eps().get(lane).copied()
}

fn continuous_input<M>(v: &Var<M>) -> bool {
    v.is_real() && v.causality == Causality::Input && v.variability == Variability::Continuous
}

/// A continuous Real output or a state derivative: the unknowns after initialization in every
/// mode (FMI 2.0.4 section 2.1.9, FMI 3.0.2 section 2.2.12). Discrete Real outputs are also
/// unknowns in Event Mode and at a Co-Simulation communication point, not in Continuous-Time
/// Mode; they change only at events, so their derivatives are 0.
pub(crate) fn continuous_unknown<M>(v: &Var<M>) -> bool {
    v.is_real()
        && ((v.causality == Causality::Output && v.variability == Variability::Continuous)
            || v.derivative_of.is_some())
}

/// An unknown whose derivative is not finite: what the call returns Discard for.
pub(crate) struct NotFinite {
    pub unknown: u32,
}
