//! A model written once over the number type: `struct Gear<S: Scalar = f64>` with every Real
//! field an `S`, its parameters (and what is fixed between events, computed from them) a
//! [`Param<S>`](crate::Param), its equations in `impl<S: Scalar> Equations for Gear<S>`. As
//! `Gear<f64>` it is the simulation; as `Gear<Jet<N>>` the same code gives `N` columns of its
//! Jacobian after initialization, the parameters plain f64 there; as `Gear<Jet<N, Moving>>`
//! (its [`Lifted::Moving`]) the parameters carry derivatives too, for Initialization Mode. The
//! derive writes how the f64 model is lifted to another number type ([`Lifted`]), from the same
//! declarations that give the variable table, so that no model seeds or reads a derivative by
//! hand.

use crate::dual::Scalar;
use crate::jet::{Jet, Lanes, Moving};

/// The equations of a model over the number type `S` of its Real fields: as f64 the
/// simulation (the integrator's right-hand side, the outputs), over jets its exact derivatives.
pub trait Equations<S: Scalar> {
    /// Computes every Real the model computes from the knowns at time `t`: the outputs, the
    /// state derivatives' variables, and the locals they need.
    fn outputs(&mut self, t: f64);

    /// The state derivatives at time `t`, in the order of the state vector (`Self::STATE`).
    fn derivatives(&self, t: f64, dx: &mut [S]);

    /// In Initialization Mode, after the states have taken their start parameters' values and
    /// before [`Equations::outputs`]: the calculated parameters and the states the start
    /// sets otherwise (an impact on a stop). The f64 model's `initialize` calls it after its
    /// checks, so both run this code.
    fn calculated(&mut self, _t: f64) {}
}

/// `Self` is the f64 part `F` (a model or a part it embeds) with its Real fields in another
/// number type. Written by `#[derive(Variables)]` for a struct generic over its number type.
pub trait Lifted<F>: Sized {
    /// The number type of the Real fields.
    type Jet: Scalar;
    /// The same with the parameters moving too: Initialization Mode's lifted model, where the
    /// parameters are knowns ([`Scalar::Moving`]).
    type Moving: Lifted<F, Jet = <Self::Jet as Scalar>::Moving>;
    /// Whether this is a lifted model (false only for [`Unlifted`]).
    const LIFTED: bool = true;
    /// `from`'s values, every derivative 0.
    fn lift(from: &F) -> Self;
    /// Takes `from`'s values and keeps every derivative.
    fn sync(&mut self, from: &F);
    /// Each declared Real variable, in the order of the variable table: its number, or None
    /// for a parameter held as a plain f64 ([`Scalar::param_mut`]).
    fn visit(&mut self, f: &mut dyn FnMut(Option<&mut Self::Jet>));
    /// Sets each state that names a start parameter to its value, derivative included.
    fn start_states(&mut self) {}
    /// Each state takes `from`'s value, seeded along direction `i - first` for the state `i`
    /// of the state vector (0 along every direction where that is not a lane, as
    /// `first =` [`UNSEEDED`] gives for all): a sweep's knowns without a lookup.
    fn seed_states(&mut self, _from: &F, _first: usize) {}
}

/// The `first` of [`Lifted::seed_states`] that seeds no state: `i - first` (wrapping) is past
/// every lane for every state `i`, and stays so in a part's states (`first` less the part's
/// offset).
pub const UNSEEDED: usize = usize::MAX / 2;

impl<D: Scalar> Lifted<f64> for D {
    type Jet = D;
    type Moving = D::Moving;
    #[inline(always)]
    fn lift(from: &f64) -> Self {
        D::constant(*from)
    }
    #[inline(always)]
    fn sync(&mut self, from: &f64) {
        self.set_value(*from);
    }
    fn visit(&mut self, f: &mut dyn FnMut(Option<&mut D>)) {
        f(Some(self))
    }
}

impl<F, T: Lifted<F>, const K: usize> Lifted<[F; K]> for [T; K] {
    type Jet = T::Jet;
    type Moving = [T::Moving; K];
    #[inline(always)]
    fn lift(from: &[F; K]) -> Self {
        std::array::from_fn(|i| T::lift(&from[i]))
    }
    #[inline(always)]
    fn sync(&mut self, from: &[F; K]) {
        for (to, from) in self.iter_mut().zip(from) {
            to.sync(from);
        }
    }
    fn visit(&mut self, f: &mut dyn FnMut(Option<&mut T::Jet>)) {
        for x in self {
            x.visit(f);
        }
    }
    fn start_states(&mut self) {
        for x in self {
            x.start_states();
        }
    }
}

/// A model lifted to jets, its equations over them.
pub trait JetModel<M>:
    Lifted<M, Jet: Lanes> + Equations<<Self as Lifted<M>>::Jet> + Send + 'static
{
}

impl<M, T: Lifted<M, Jet: Lanes> + Equations<<T as Lifted<M>>::Jet> + Send + 'static> JetModel<M>
    for T
{
}

/// What a model's exact derivatives are computed on: the model lifted to [`Jet`]s
/// (`type Jets = Gear<Jet<2>>`, a lane per state), or [`Unlifted`] for a model that provides
/// none; and in Initialization Mode the same with its parameters moving ([`Jets::Initial`]).
pub trait Jets<M>: JetModel<M> {
    type Initial: JetModel<M>;
}

impl<M, T: JetModel<M>> Jets<M> for T
where
    T::Moving: JetModel<M>,
{
    type Initial = T::Moving;
}

/// The `Jets` of a model that is not written over the number type.
pub struct Unlifted;

impl<M> Lifted<M> for Unlifted {
    type Jet = Jet<1>;
    type Moving = UnliftedInitial;
    const LIFTED: bool = false;
    fn lift(_: &M) -> Self {
        Unlifted
    }
    fn sync(&mut self, _: &M) {}
    fn visit(&mut self, _: &mut dyn FnMut(Option<&mut Jet<1>>)) {}
}

/// [`Unlifted`]'s Initialization Mode counterpart: nothing either.
pub struct UnliftedInitial;

impl<M> Lifted<M> for UnliftedInitial {
    type Jet = Jet<1, Moving>;
    type Moving = UnliftedInitial;
    const LIFTED: bool = false;
    fn lift(_: &M) -> Self {
        UnliftedInitial
    }
    fn sync(&mut self, _: &M) {}
    fn visit(&mut self, _: &mut dyn FnMut(Option<&mut Jet<1, Moving>>)) {}
}

impl Equations<Jet<1, Moving>> for UnliftedInitial {
    fn outputs(&mut self, _t: f64) {}
    fn derivatives(&self, _t: f64, _dx: &mut [Jet<1, Moving>]) {}
}

impl Equations<Jet<1>> for Unlifted {
    fn outputs(&mut self, _t: f64) {}
    fn derivatives(&self, _t: f64, _dx: &mut [Jet<1>]) {}
}
