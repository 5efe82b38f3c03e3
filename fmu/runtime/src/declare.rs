//! What `#[derive(Variables)]` writes for a model (see the `fmu-declare` crate): its variable
//! table, its state vector and its start values, from the declarations on its fields.

use crate::variables::Var;
use std::marker::PhantomData;

/// A struct whose fields declare variables: a model, or a part that models embed (a gear's
/// flanges, a transmission's parameters). Written by `#[derive(Variables)]`.
pub trait Variables: Default + 'static {
    /// Number of continuous states, embedded parts' included.
    const STATES: usize;
    /// Bit `i` set: state `i` is a shaft angle. Angles grow without bound and only their
    /// increments matter, so the integrator controls their error relative to the distance
    /// travelled rather than to their value.
    const ANGLES: u64;
    /// Each state's index by name (the derive's `<Model>States`; `()` for a part written by
    /// hand). The model's `Self::STATE` holds it, for writing derivatives by state name.
    type StateIndex: Copy;

    /// Appends the variables, in declaration order, reached in the whole model through `L`.
    fn declare<L: Lens<Inner = Self>>(vars: &mut Vec<Var<L::Outer>>);

    /// Writes the states, in declaration order, to `x` (`STATES` long).
    fn get_states(&self, x: &mut [f64]);
    /// Reads the states from `x` (`STATES` long).
    fn set_states(&mut self, x: &[f64]);
    /// Sets each state that names a start parameter (`from = ...`) to its value.
    fn start_states(&mut self);
    /// The sum of every declared Real output times zero: 0 when all are finite, NaN when one
    /// is not. Read directly from the fields, so that the check after every step costs a few
    /// instructions per output (the runtime confirms it against the variable table once).
    fn output_zeros(&self) -> f64 {
        f64::NAN
    }

    /// The variable table of a model; the value reference of a variable is its position in it.
    fn variables() -> Vec<Var<Self>> {
        let mut vars = Vec::new();
        Self::declare::<Identity<Self>>(&mut vars);
        link_derivatives(&mut vars);
        vars
    }

    /// Whether state `i` is a shaft angle.
    #[inline(always)]
    fn is_angle(i: usize) -> bool {
        Self::ANGLES >> i & 1 == 1
    }
}

/// How the declarations of a part reach it inside the model: the model is `Outer`, the part
/// `Inner`.
pub trait Lens {
    type Outer: 'static;
    type Inner: 'static;
    fn get(m: &Self::Outer) -> &Self::Inner;
    fn get_mut(m: &mut Self::Outer) -> &mut Self::Inner;
}

/// The model itself.
pub struct Identity<M>(PhantomData<M>);

impl<M: 'static> Lens for Identity<M> {
    type Outer = M;
    type Inner = M;
    #[inline(always)]
    fn get(m: &M) -> &M {
        m
    }
    #[inline(always)]
    fn get_mut(m: &mut M) -> &mut M {
        m
    }
}

/// `B` inside what `A` reaches.
pub struct Then<A, B>(PhantomData<(A, B)>);

impl<A: Lens, B: Lens<Outer = A::Inner>> Lens for Then<A, B> {
    type Outer = A::Outer;
    type Inner = B::Inner;
    #[inline(always)]
    fn get(m: &A::Outer) -> &B::Inner {
        B::get(A::get(m))
    }
    #[inline(always)]
    fn get_mut(m: &mut A::Outer) -> &mut B::Inner {
        B::get_mut(A::get_mut(m))
    }
}

/// Points each state's derivative variable back at the state (`derivative_of`, for the XML),
/// and checks that the derivatives come in the order of the states: FMI lists the
/// derivatives in the order of the state vector.
fn link_derivatives<M>(vars: &mut [Var<M>]) {
    let states: Vec<(&'static str, &'static str)> = vars
        .iter()
        .filter_map(|v| v.derivative.map(|d| (v.name, d)))
        .collect();
    for (state, derivative) in &states {
        let v = vars
            .iter_mut()
            .find(|v| v.name == *derivative)
            .unwrap_or_else(|| panic!("{state}'s derivative {derivative} is not declared"));
        v.derivative_of = Some(state);
    }
    let order: Vec<&str> = vars.iter().filter_map(|v| v.derivative_of).collect();
    let declared: Vec<&str> = states.iter().map(|s| s.0).collect();
    assert_eq!(
        order, declared,
        "the derivatives must be declared in the order of their states"
    );
}

/// The names of several lists in one, at compile time, for a dependency list made of families
/// of variables (`initial_depends_on = &LIST`); `N` must be the total length.
pub const fn concat_names<const N: usize>(parts: &[&[&'static str]]) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut p) = (0, 0);
    while p < parts.len() {
        let mut j = 0;
        while j < parts[p].len() {
            out[i] = parts[p][j];
            i += 1;
            j += 1;
        }
        p += 1;
    }
    assert!(i == N, "concat_names: N is not the total length");
    out
}

#[cfg(test)]
mod tests {
    use super::Variables;

    #[derive(Debug, Clone, fmu_declare::Variables)]
    struct Part {
        #[output(state, derivative = "w")]
        phi: f64,
        #[output(state, derivative = "a")]
        w: f64,
        #[output]
        a: f64,
    }

    #[derive(Debug, Clone, fmu_declare::Variables)]
    struct Whole {
        #[output(name = "q0", index = 0, state, derivative = "r0")]
        #[output(name = "q1", index = 1, state, derivative = "r1")]
        #[start([0.0; 2])]
        q: [f64; 2],
        #[output(name = "r0", index = 0)]
        #[output(name = "r1", index = 1)]
        #[start([0.0; 2])]
        r: [f64; 2],
        #[variables]
        part: Part,
        #[output(state, derivative = "r0")]
        energy: f64,
    }

    #[test]
    fn each_state_is_at_its_named_index() {
        let mut m = Whole::default();
        (m.q, m.part.phi, m.part.w, m.energy) = ([1.0, 2.0], 3.0, 4.0, 5.0);
        let mut x = [0.0; Whole::STATES];
        m.get_states(&mut x);
        let s = Whole::STATE;
        assert_eq!(
            [s.q0, s.q1, s.part.phi, s.part.w, s.energy],
            [0, 1, 2, 3, 4]
        );
        assert_eq!(
            [x[s.q0], x[s.q1], x[s.part.phi], x[s.part.w], x[s.energy]],
            [1.0, 2.0, 3.0, 4.0, 5.0]
        );
        assert_eq!(Part::STATE.w, 1);
    }
}
