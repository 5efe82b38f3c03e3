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
    /// Every variable name of the part, embedded parts' and families' included, sorted
    /// ([`sorted_names`]).
    const NAMES: &'static [&'static str] = &[];
    /// Every dependency list the part declares, by the variable it is declared for.
    const DEPENDENCIES: &'static [Dependencies] = &[];

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
    concat(parts, "")
}

/// Several lists in one, at compile time; `N` must be the total length.
const fn concat<T: Copy, const N: usize>(parts: &[&[T]], fill: T) -> [T; N] {
    let mut out = [fill; N];
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
    assert!(i == N, "concat: N is not the total length");
    out
}

/// One dependency list as declared: `of`, the variable (or the `#[variables(...)]` override)
/// it is declared for; `names`, the variables it names.
#[derive(Debug, Clone, Copy)]
pub struct Dependencies {
    pub of: &'static str,
    pub names: &'static [&'static str],
}

/// The dependency lists of several parts in one, at compile time; `N` is the total length.
pub const fn concat_dependencies<const N: usize>(parts: &[&[Dependencies]]) -> [Dependencies; N] {
    concat(parts, Dependencies { of: "", names: &[] })
}

/// Byte order of two names: negative, zero or positive.
const fn order(a: &str, b: &str) -> i32 {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut i = 0;
    while i < a.len() && i < b.len() {
        if a[i] != b[i] {
            return a[i] as i32 - b[i] as i32;
        }
        i += 1;
    }
    a.len() as i32 - b.len() as i32
}

/// [`concat_names`], sorted: the compile-time check looks each dependency up by bisection,
/// which keeps it to a fraction of a second for the largest model.
pub const fn sorted_names<const N: usize>(parts: &[&[&'static str]]) -> [&'static str; N] {
    let mut out = concat_names::<N>(parts);
    let mut i = 1;
    while i < N {
        let mut j = i;
        while j > 0 && order(out[j - 1], out[j]) > 0 {
            (out[j - 1], out[j]) = (out[j], out[j - 1]);
            j -= 1;
        }
        i += 1;
    }
    out
}

/// Whether the sorted `names` hold `name`.
const fn holds(names: &[&str], name: &str) -> bool {
    let (mut low, mut high) = (0, names.len());
    while low < high {
        let mid = (low + high) / 2;
        let o = order(names[mid], name);
        if o == 0 {
            return true;
        } else if o < 0 {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    false
}

/// Appends `s` to the message in `buf` at `at`; returns the new end (cut at the buffer's end).
const fn append(buf: &mut [u8; 240], mut at: usize, s: &str) -> usize {
    let s = s.as_bytes();
    let mut i = 0;
    while i < s.len() && at < buf.len() {
        buf[at] = s[i];
        (i, at) = (i + 1, at + 1);
    }
    at
}

/// Fails the build of model `M` where a dependency list names a variable `M` does not declare:
/// `export_fmu!` evaluates it at compile time, so that a misspelt name is a compile error
/// naming the variable and the list.
///
/// ```
/// use fmu_runtime::Variables;
///
/// #[derive(Debug, Clone, Variables)]
/// struct Plant {
///     #[input]
///     u: f64,
///     #[output(depends_on = ["u"])]
///     y: f64,
/// }
/// const _: () = fmu_runtime::declare::check_dependencies::<Plant>();
/// ```
///
/// The same with `"u"` misspelt does not compile ("the dependencies of `y` name `uu`, which the
/// model does not declare"):
///
/// ```compile_fail
/// use fmu_runtime::Variables;
///
/// #[derive(Debug, Clone, Variables)]
/// struct Plant {
///     #[input]
///     u: f64,
///     #[output(depends_on = ["uu"])]
///     y: f64,
/// }
/// const _: () = fmu_runtime::declare::check_dependencies::<Plant>();
/// ```
pub const fn check_dependencies<M: Variables>() {
    let (names, lists) = (M::NAMES, M::DEPENDENCIES);
    let mut l = 0;
    while l < lists.len() {
        let mut d = 0;
        while d < lists[l].names.len() {
            let name = lists[l].names[d];
            if !holds(names, name) {
                let mut buf = [0u8; 240];
                let mut at = append(&mut buf, 0, "the dependencies of `");
                at = append(&mut buf, at, lists[l].of);
                at = append(&mut buf, at, "` name `");
                at = append(&mut buf, at, name);
                at = append(&mut buf, at, "`, which the model does not declare");
                match core::str::from_utf8(buf.split_at(at).0) {
                    Ok(message) => panic!("{}", message),
                    Err(_) => panic!("a dependency names a variable the model does not declare"),
                }
            }
            d += 1;
        }
        l += 1;
    }
}
