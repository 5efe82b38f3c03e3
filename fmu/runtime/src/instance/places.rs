//! Where the lifted models hold each Real variable's jet (byte offsets found by `visit`, in
//! the variable table's order), and the check that they do: after initialization a parameter
//! or a discrete variable may be a plain f64 there, never a continuous variable.

use super::jacobian::{InitialOf, JetOf, NONE};
use crate::dual::Scalar;
use crate::jet::Lanes;
use crate::lift::{Lifted, UNSEEDED};
use crate::model::Model;
use crate::variables::{Access, Var, Variability};

/// Where a lifted model holds each Real variable's jet, by value reference: the byte offsets
/// `visit` finds, in the table's order, checked to lie inside the lifted model (NONE for a
/// parameter held as an f64). That the order is the table's is checked once per model by its
/// tests ([`places_follow_the_table`]).
pub(crate) fn places<M: Model, L: Lifted<M>>(lifted: &mut L, vars: &[Var<M>]) -> Vec<usize> {
    let reals: Vec<usize> = (0..vars.len()).filter(|i| vars[*i].is_real()).collect();
    let base = lifted as *const L as usize;
    let size = std::mem::size_of::<L>() - std::mem::size_of::<L::Jet>();
    let mut offsets = vec![NONE; vars.len()];
    let mut i = 0;
    lifted.visit(&mut |j| {
        let Some(j) = j else {
            i += 1;
            return;
        };
        let place = j as *mut L::Jet as usize - base;
        if let Some(vr) = reals.get(i) {
            assert!(
                place <= size,
                "{}: {} lies outside the model",
                M::NAME,
                vars[*vr].name
            );
            offsets[*vr] = place;
        }
        i += 1;
    });
    assert_eq!(
        i,
        reals.len(),
        "{}: the lifted model visits {i} of {} Real variables",
        M::NAME,
        reals.len()
    );
    offsets
}

/// Whether the lifted model's jets follow the variable table's order: each Real variable set
/// to a value of its own in the f64 model is found at its place in the lifted one. The error
/// names the first that is not.
pub(crate) fn places_follow_the_table<M: Model>(model: &M, vars: &[Var<M>]) -> Result<(), String> {
    if !<M::Jets as Lifted<M>>::LIFTED {
        return Ok(());
    }
    let reals: Vec<usize> = (0..vars.len()).filter(|i| vars[*i].is_real()).collect();
    let mut marked = model.clone();
    for (i, vr) in reals.iter().enumerate() {
        if let Access::Real { set, .. } = vars[*vr].access {
            set(&mut marked, i as f64 + 0.5);
        }
    }
    follows::<M, M::Jets>(&marked, vars, &reals, false)?;
    follows::<M, InitialOf<M>>(&marked, vars, &reals, true)?;
    seeds_follow_the_states(&marked, vars)
}

/// Whether the lifted model's `seed_states` seeds the states in the state vector's order,
/// chunk by chunk of lanes, their values the f64 model's, and unseeds them all: the error names
/// the first state that is not.
fn seeds_follow_the_states<M: Model>(marked: &M, vars: &[Var<M>]) -> Result<(), String> {
    let mut lifted = M::Jets::lift(marked);
    let offsets = places(&mut lifted, vars);
    let states: Vec<usize> = (0..vars.len())
        .filter(|i| vars[*i].derivative.is_some())
        .collect();
    let lanes = <JetOf<M> as Lanes>::LANES;
    let firsts = (0..states.len()).step_by(lanes).chain([UNSEEDED]);
    for first in firsts {
        lifted.seed_states(marked, first);
        for (i, vr) in states.iter().enumerate() {
            let jet = *jet_at::<M, M::Jets>(&mut lifted, offsets[*vr]);
            let seeded = (0..lanes).all(|l| jet.eps()[l] == f64::from(u8::from(first + l == i)));
            let value = match vars[*vr].access {
                Access::Real { get, .. } => get(marked),
                _ => f64::NAN,
            };
            if !seeded || jet.value() != value {
                return Err(format!(
                    "{}: seed_states does not seed state {i}, {}, in the state vector's order (chunk from {first})",
                    M::NAME,
                    vars[*vr].name
                ));
            }
        }
    }
    Ok(())
}

/// [`places_follow_the_table`] for one lifted model: every Real variable found where it is
/// held, as a jet; a parameter or a discrete variable (nothing continuous) may be a plain f64
/// in `L`, unless `all`.
fn follows<M: Model, L: Lifted<M>>(
    marked: &M,
    vars: &[Var<M>],
    reals: &[usize],
    all: bool,
) -> Result<(), String> {
    let mut lifted = L::lift(marked);
    let offsets = places(&mut lifted, vars);
    for (i, vr) in reals.iter().enumerate() {
        let v = &vars[*vr];
        if offsets[*vr] == NONE {
            // Between events only the continuous variables move with the states and inputs.
            if all || v.variability == Variability::Continuous {
                return Err(format!(
                    "{}: {} is no jet in the lifted model: only a parameter or a discrete variable may be a plain f64, and only after initialization",
                    M::NAME,
                    v.name
                ));
            }
            continue;
        }
        let found = jet_at::<M, L>(&mut lifted, offsets[*vr]).value();
        if found != i as f64 + 0.5 {
            return Err(format!(
                "{}: the lifted model's Real variable {i} is not {}",
                M::NAME,
                v.name
            ));
        }
    }
    Ok(())
}

/// The jet at `offset` in `lifted` (the lifted model after initialization, or Initialization
/// Mode's).
#[inline(always)]
pub(crate) fn jet_at<M, L: Lifted<M>>(lifted: &mut L, offset: usize) -> &mut L::Jet {
    debug_assert!(offset != NONE, "no Real variable");
    assert!(offset <= std::mem::size_of::<L>() - std::mem::size_of::<L::Jet>());
    // SAFETY: `offset` is where `visit` found a Real variable's jet inside a value of type
    // `L` (`places`), and lies inside it (checked above); the jet is borrowed mutably through
    // the mutable borrow of `lifted`.
    unsafe { &mut *((lifted as *mut L as *mut u8).add(offset) as *mut L::Jet) }
}
