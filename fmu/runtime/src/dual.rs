//! The number type of a model's equations, [`Scalar`], for exact Jacobians
//! (`fmi2GetDirectionalDerivative` and FMI 3.0's directional and adjoint derivatives).
//!
//! A model's equations are written once over [`Scalar`]:
//! - as `f64` they are the simulation itself: every function is the project's [`crate::math`]
//!   (libm), the same on every platform;
//! - as [`crate::Jet`] they carry, beside each value, its derivatives along several directions
//!   of the knowns, exact to rounding, by the chain rule applied operation by operation.
//!
//! No finite difference is taken anywhere. An operation at a kink (`abs` at 0, `min` and `max`
//! of equal values) gives the derivative of the branch the value takes, as the f64 path does.
//!
//! A general-purpose crate (num-dual) was not taken: its `f64` calls the platform's `sin` and
//! `atan2`, which would change the bit-identical f64 path across platforms.

use crate::math;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// A parameter's type in equations over `S` (a field declared `Param<S>`): `S` itself, but
/// a plain f64 among the jets after initialization ([`Scalar::P`]).
pub type Param<S> = <S as Scalar>::P;

/// A function of one number with `K` results, the parameters of type `P` held in `self`
/// (the geometry of a mechanism at its angle): written once over the number type, for
/// [`Scalar::of_one`].
pub trait OfOne<P, const K: usize> {
    fn at<T: Scalar<P = P>>(&self, x: T) -> [T; K];
}

/// The number type of equations that also give their derivatives.
pub trait Scalar:
    Copy
    + PartialOrd
    + PartialEq
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + Add<f64, Output = Self>
    + Sub<f64, Output = Self>
    + Mul<f64, Output = Self>
    + Div<f64, Output = Self>
    + Add<Self::P, Output = Self>
    + Sub<Self::P, Output = Self>
    + Mul<Self::P, Output = Self>
    + Div<Self::P, Output = Self>
{
    /// The number type of the parameters in equations over this one ([`Param`]): itself, but
    /// for the jets after initialization, where the parameters do not move with the knowns and
    /// are plain f64, so that an operation with one costs no derivatives.
    type P: Scalar<P = Self::P>
        + std::fmt::Debug
        + Add<Self, Output = Self>
        + Sub<Self, Output = Self>
        + Mul<Self, Output = Self>
        + Div<Self, Output = Self>;
    /// This number type with the parameters moving too (Initialization Mode's).
    type Moving: Scalar<P = Self::Moving, Moving = Self::Moving>;
    /// A parameter as this number type.
    fn param(p: Self::P) -> Self;
    /// A parameter as a number of this type, where it is one (not a plain f64 among jets).
    fn param_mut(p: &mut Self::P) -> Option<&mut Self>;
    /// A value that does not move with the knowns (a parameter not seeded, a literal).
    fn constant(v: f64) -> Self;
    /// The value, without its derivative.
    fn value(self) -> f64;
    /// Sets the value and keeps the derivative (how a lifted model follows the f64 one).
    fn set_value(&mut self, v: f64);
    /// The value `v` with derivative 1 along direction `lane` and 0 along the others (none
    /// where `lane` is past the last): a known seeded for a sweep.
    fn seeded_lane(v: f64, lane: usize) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn sin_cos(self) -> (Self, Self);
    fn sqrt(self) -> Self;
    fn powi(self, n: i32) -> Self;
    fn tanh(self) -> Self;
    fn asin(self) -> Self;
    fn acos(self) -> Self;
    /// `atan2(self, x)`: the angle of the point (x, self).
    fn atan2(self, x: Self) -> Self;

    /// The root `x` of `h(x, knowns) = 0` that an f64 iteration (Newton, bisection) found,
    /// moving with the knowns by the implicit function theorem: `dx = -(dh/dknowns) / h_x`,
    /// with `h_x = dh/dx` at the root (in f64) and `residual(x)` the residual `h` with `x` held
    /// at the root. As f64, `x` itself: the simulation keeps the iteration's bits.
    fn root(x: f64, h_x: f64, residual: impl FnOnce(Self) -> Self) -> Self;

    /// `f(self)` for a function `f` of this number alone (the parameters held): over jets
    /// after initialization, where the parameters are fixed, `f` runs along one direction and
    /// the chain rule carries its results to this number's directions (`d f(x) = f'(x) dx`),
    /// so that `f` costs a dual number's arithmetic, not every direction's. Elsewhere `f`
    /// runs over this type itself: as f64 it gives the simulation's bits.
    fn of_one<const K: usize, F: OfOne<Self::P, K>>(self, f: &F) -> [Self; K];

    /// |self|: the derivative of the side the value is on (+ at 0).
    #[inline(always)]
    fn abs(self) -> Self {
        if self.value() < 0.0 {
            -self
        } else {
            self
        }
    }

    /// The smaller, with its derivative (the first at a tie, as `f64::min` picks a value).
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        if other.value() < self.value() {
            other
        } else {
            self
        }
    }

    /// The larger, with its derivative (the first at a tie).
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        if other.value() > self.value() {
            other
        } else {
            self
        }
    }

    /// The value held between `lo` and `hi`: a bound does not move with the knowns.
    #[inline(always)]
    fn clamp(self, lo: f64, hi: f64) -> Self {
        if self.value() < lo {
            Self::constant(lo)
        } else if self.value() > hi {
            Self::constant(hi)
        } else {
            self
        }
    }
}

impl Scalar for f64 {
    type P = f64;
    type Moving = f64;
    #[inline(always)]
    fn param(p: f64) -> Self {
        p
    }
    #[inline(always)]
    fn param_mut(p: &mut f64) -> Option<&mut Self> {
        Some(p)
    }
    #[inline(always)]
    fn constant(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn value(self) -> f64 {
        self
    }
    #[inline(always)]
    fn set_value(&mut self, v: f64) {
        *self = v;
    }
    #[inline(always)]
    fn seeded_lane(v: f64, _: usize) -> Self {
        v
    }
    #[inline(always)]
    fn sin(self) -> Self {
        math::sin(self)
    }
    #[inline(always)]
    fn cos(self) -> Self {
        math::cos(self)
    }
    #[inline(always)]
    fn sin_cos(self) -> (Self, Self) {
        math::sin_cos(self)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        // IEEE 754 square root: correctly rounded on every platform.
        f64::sqrt(self)
    }
    #[inline(always)]
    fn powi(self, n: i32) -> Self {
        f64::powi(self, n)
    }
    #[inline(always)]
    fn tanh(self) -> Self {
        math::tanh(self)
    }
    #[inline(always)]
    fn asin(self) -> Self {
        math::asin(self)
    }
    #[inline(always)]
    fn acos(self) -> Self {
        math::acos(self)
    }
    #[inline(always)]
    fn atan2(self, x: Self) -> Self {
        math::atan2(self, x)
    }
    #[inline(always)]
    fn root(x: f64, _h_x: f64, _residual: impl FnOnce(Self) -> Self) -> Self {
        x
    }
    #[inline(always)]
    fn of_one<const K: usize, F: OfOne<f64, K>>(self, f: &F) -> [Self; K] {
        f.at(self)
    }
    // f64's own, so that generic code gives the bits f64 code gives (signed zeros, NaN).
    #[inline(always)]
    fn abs(self) -> Self {
        f64::abs(self)
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        f64::min(self, other)
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        f64::max(self, other)
    }
    #[inline(always)]
    fn clamp(self, lo: f64, hi: f64) -> Self {
        f64::clamp(self, lo, hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jet::Jet;

    /// One direction: a jet of one lane.
    type Dual = Jet<1>;

    trait Seeded {
        fn seeded(re: f64, d: f64) -> Self;
    }

    impl Seeded for Dual {
        fn seeded(re: f64, d: f64) -> Self {
            Jet::new(re, [d])
        }
    }

    /// `f` as f64 and its derivative at `x` by the dual numbers, against the closed form `df`
    /// and a central difference (which agrees to about 1e-9 of the slope).
    fn check(name: &str, x: f64, f: impl Fn(Dual) -> Dual, g: impl Fn(f64) -> f64, df: f64) {
        let d = f(Dual::seeded(x, 1.0));
        assert_eq!(
            d.re.to_bits(),
            g(x).to_bits(),
            "{name}({x}): the value is the f64 path's"
        );
        let scale = df.abs().max(1.0);
        assert!(
            (d.eps[0] - df).abs() <= 4.0 * f64::EPSILON * scale,
            "{name}'({x}) = {}, closed form {df}",
            d.eps[0]
        );
        let h = 1e-6 * x.abs().max(1.0);
        let central = (g(x + h) - g(x - h)) / (2.0 * h);
        assert!(
            (d.eps[0] - central).abs() <= 1e-7 * scale,
            "{name}'({x}) = {}, central difference {central}",
            d.eps[0]
        );
    }

    #[test]
    fn each_function_carries_its_derivative_and_the_f64_value() {
        for x in [0.3, -1.2, 2.9, 100.0] {
            let (s, c) = math::sin_cos(x);
            check("sin", x, Dual::sin, <f64 as Scalar>::sin, c);
            check("cos", x, Dual::cos, <f64 as Scalar>::cos, -s);
            check("sin_cos.0", x, |d| d.sin_cos().0, |v| math::sin_cos(v).0, c);
            check(
                "sin_cos.1",
                x,
                |d| d.sin_cos().1,
                |v| math::sin_cos(v).1,
                -s,
            );
            let t = math::tanh(x);
            check("tanh", x, Dual::tanh, <f64 as Scalar>::tanh, 1.0 - t * t);
            check("powi3", x, |d| d.powi(3), |v| v.powi(3), 3.0 * x * x);
            check("abs", x, Dual::abs, f64::abs, x.signum());
        }
        for x in [0.1, 2.5, 1e4] {
            check("sqrt", x, Dual::sqrt, f64::sqrt, 0.5 / x.sqrt());
        }
        for x in [-0.7, 0.0, 0.4] {
            let root = (1.0 - x * x).sqrt();
            check("asin", x, Dual::asin, <f64 as Scalar>::asin, 1.0 / root);
            check("acos", x, Dual::acos, <f64 as Scalar>::acos, -1.0 / root);
        }
    }

    #[test]
    fn the_arithmetic_follows_the_product_and_quotient_rules() {
        // f(x) = (x^2 + 3) / (2 - x) * x - 5: f' = x (2x (2 - x) + x^2 + 3) / (2 - x)^2
        //   + (x^2 + 3) / (2 - x).
        let f = |x: Dual| (x * x + 3.0) / (Dual::constant(2.0) - x) * x - 5.0;
        let g = |x: f64| (x * x + 3.0) / (2.0 - x) * x - 5.0;
        for x in [0.5, -3.0, 1.7] {
            let q = 2.0 - x;
            let df = x * (2.0 * x * q + x * x + 3.0) / (q * q) + (x * x + 3.0) / q;
            check("rational", x, f, g, df);
        }
    }

    #[test]
    fn atan2_moves_with_both_coordinates() {
        let (y, x) = (0.8, -1.5);
        let r2 = x * x + y * y;
        let along_y = Dual::seeded(y, 1.0).atan2(Dual::constant(x));
        let along_x = Dual::constant(y).atan2(Dual::seeded(x, 1.0));
        assert_eq!(along_y.re.to_bits(), math::atan2(y, x).to_bits());
        assert!((along_y.eps[0] - x / r2).abs() < 4.0 * f64::EPSILON);
        assert!((along_x.eps[0] + y / r2).abs() < 4.0 * f64::EPSILON);
    }

    #[test]
    fn min_max_and_comparisons_follow_the_values() {
        let (a, b) = (Dual::seeded(1.0, 2.0), Dual::seeded(3.0, -1.0));
        assert_eq!(a.min(b), a);
        assert_eq!(a.max(b), b);
        assert!(a < b);
        assert_eq!(a.max(a).eps[0], 2.0);
    }
}
