//! A model written once over the number type: `struct Gear<S = f64>` with every Real field an
//! `S`, its equations in `impl<S: Scalar> Equations for Gear<S>`. As `Gear<f64>` it is the
//! simulation; as `Gear<Jet<N>>` the same code gives `N` columns of its Jacobian. The derive
//! writes how the f64 model is lifted to another number type ([`Lifted`]), from the same
//! declarations that give the variable table, so that no model seeds or reads a derivative by
//! hand.

use crate::dual::Scalar;
use crate::jet::{Jet, Lanes};

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
    /// Whether this is a lifted model (false only for [`Unlifted`]).
    const LIFTED: bool = true;
    /// `from`'s values, every derivative 0.
    fn lift(from: &F) -> Self;
    /// Takes `from`'s values and keeps every derivative.
    fn sync(&mut self, from: &F);
    /// Each declared Real variable, in the order of the variable table.
    fn visit(&mut self, f: &mut dyn FnMut(&mut Self::Jet));
    /// Sets each state that names a start parameter to its value, derivative included.
    fn start_states(&mut self) {}
}

impl<D: Scalar> Lifted<f64> for D {
    type Jet = D;
    #[inline(always)]
    fn lift(from: &f64) -> Self {
        D::constant(*from)
    }
    #[inline(always)]
    fn sync(&mut self, from: &f64) {
        self.set_value(*from);
    }
    fn visit(&mut self, f: &mut dyn FnMut(&mut D)) {
        f(self)
    }
}

impl<F, T: Lifted<F>, const K: usize> Lifted<[F; K]> for [T; K] {
    type Jet = T::Jet;
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
    fn visit(&mut self, f: &mut dyn FnMut(&mut T::Jet)) {
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

/// What a model's exact derivatives are computed on: the model lifted to [`Jet`]s
/// (`type Jets = Gear<Jet<2>>`, a lane per state), or [`Unlifted`] for a model that provides
/// none.
pub trait Jets<M>:
    Lifted<M, Jet: Lanes> + Equations<<Self as Lifted<M>>::Jet> + Send + 'static
{
}

impl<M, T: Lifted<M, Jet: Lanes> + Equations<<T as Lifted<M>>::Jet> + Send + 'static> Jets<M>
    for T
{
}

/// The `Jets` of a model that is not written over the number type.
pub struct Unlifted;

impl<M> Lifted<M> for Unlifted {
    type Jet = Jet<1>;
    const LIFTED: bool = false;
    fn lift(_: &M) -> Self {
        Unlifted
    }
    fn sync(&mut self, _: &M) {}
    fn visit(&mut self, _: &mut dyn FnMut(&mut Jet<1>)) {}
}

impl Equations<Jet<1>> for Unlifted {
    fn outputs(&mut self, _t: f64) {}
    fn derivatives(&self, _t: f64, _dx: &mut [Jet<1>]) {}
}
