//! Forward-mode derivatives along `N` directions at once: a value and its derivative along
//! each of `N` directions of the knowns. One pass of a model's equations over [`Jet<N>`] gives
//! `N` columns of its Jacobian, so the runtime gets every column a Model Exchange importer
//! asks for (the states and the continuous inputs) in one sweep rather than one per column;
//! the chain rule is applied operation by operation, with the value
//! computed exactly as the f64 path computes it ([`crate::math`], libm).

use crate::dual::{OfOne, Scalar};
use crate::math;
use std::marker::PhantomData;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// A value and its derivatives along `N` directions. `K` says whether the parameters move
/// with the knowns too: [`Fixed`] after initialization, where the knowns are the states and
/// the inputs and a parameter is a plain f64 in the equations (a product by it costs `N + 1`
/// multiplications, not `2N + 1`); [`Moving`] in Initialization Mode, where the parameters are
/// knowns and carry their derivatives like every other number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Jet<const N: usize, K = Fixed> {
    pub re: f64,
    pub eps: [f64; N],
    kind: PhantomData<K>,
}

/// The parameters are plain f64 (after initialization).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fixed;

/// The parameters carry derivatives too (Initialization Mode).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moving;

/// What the runtime needs of the number type of a lifted model: its directions.
pub trait Lanes: Scalar + Send + 'static {
    /// The number of directions one sweep carries.
    const LANES: usize;
    fn eps(&self) -> &[f64];
    fn eps_mut(&mut self) -> &mut [f64];
}

impl<const N: usize, K: Send + Sync + Copy + PartialEq + std::fmt::Debug + 'static> Lanes
    for Jet<N, K>
where
    Jet<N, K>: Scalar,
{
    const LANES: usize = N;
    #[inline(always)]
    fn eps(&self) -> &[f64] {
        &self.eps
    }
    #[inline(always)]
    fn eps_mut(&mut self) -> &mut [f64] {
        &mut self.eps
    }
}

impl<const N: usize, K> Jet<N, K> {
    /// A value and its derivatives.
    #[inline(always)]
    pub const fn new(re: f64, eps: [f64; N]) -> Self {
        Jet {
            re,
            eps,
            kind: PhantomData,
        }
    }

    /// The chain rule for a function of one argument: `f(re)` and `f'(re)`.
    #[inline(always)]
    fn chain(self, f: f64, df: f64) -> Self {
        Jet::new(f, self.eps.map(|e| df * e))
    }

    #[inline(always)]
    fn zip(a: [f64; N], b: [f64; N], f: impl Fn(f64, f64) -> f64) -> [f64; N] {
        std::array::from_fn(|i| f(a[i], b[i]))
    }
}

impl<const N: usize, K: PartialEq> PartialOrd for Jet<N, K> {
    /// Ordered by value: a branch of the equations follows the value, as in f64.
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        self.re.partial_cmp(&other.re)
    }
}

impl<const N: usize, K> Add for Jet<N, K> {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Jet::new(self.re + o.re, Self::zip(self.eps, o.eps, |a, b| a + b))
    }
}

impl<const N: usize, K> Sub for Jet<N, K> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Jet::new(self.re - o.re, Self::zip(self.eps, o.eps, |a, b| a - b))
    }
}

impl<const N: usize, K> Mul for Jet<N, K> {
    type Output = Self;
    // The product rule: the derivative of a product is a sum.
    #[allow(clippy::suspicious_arithmetic_impl)]
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        let (a, b) = (self.re, o.re);
        Jet::new(a * b, Self::zip(self.eps, o.eps, |x, y| x * b + a * y))
    }
}

impl<const N: usize, K> Div for Jet<N, K> {
    type Output = Self;
    // The quotient rule.
    #[allow(clippy::suspicious_arithmetic_impl)]
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        let re = self.re / o.re;
        Jet::new(re, Self::zip(self.eps, o.eps, |x, y| (x - re * y) / o.re))
    }
}

impl<const N: usize, K> Neg for Jet<N, K> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Jet::new(-self.re, self.eps.map(|e| -e))
    }
}

impl<const N: usize, K> Add<f64> for Jet<N, K> {
    type Output = Self;
    #[inline(always)]
    fn add(self, c: f64) -> Self {
        Jet::new(self.re + c, self.eps)
    }
}

impl<const N: usize, K> Sub<f64> for Jet<N, K> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, c: f64) -> Self {
        Jet::new(self.re - c, self.eps)
    }
}

impl<const N: usize, K> Mul<f64> for Jet<N, K> {
    type Output = Self;
    #[inline(always)]
    fn mul(self, c: f64) -> Self {
        Jet::new(self.re * c, self.eps.map(|e| e * c))
    }
}

impl<const N: usize, K> Div<f64> for Jet<N, K> {
    type Output = Self;
    #[inline(always)]
    fn div(self, c: f64) -> Self {
        Jet::new(self.re / c, self.eps.map(|e| e / c))
    }
}

/// A parameter (a plain f64 after initialization) on the left of a jet: the arithmetic of a
/// jet whose derivatives are 0, without their products.
impl<const N: usize> Add<Jet<N>> for f64 {
    type Output = Jet<N>;
    #[inline(always)]
    fn add(self, o: Jet<N>) -> Jet<N> {
        Jet::new(self + o.re, o.eps)
    }
}

impl<const N: usize> Sub<Jet<N>> for f64 {
    type Output = Jet<N>;
    #[inline(always)]
    fn sub(self, o: Jet<N>) -> Jet<N> {
        Jet::new(self - o.re, o.eps.map(|e| -e))
    }
}

impl<const N: usize> Mul<Jet<N>> for f64 {
    type Output = Jet<N>;
    #[inline(always)]
    fn mul(self, o: Jet<N>) -> Jet<N> {
        Jet::new(self * o.re, o.eps.map(|e| self * e))
    }
}

impl<const N: usize> Div<Jet<N>> for f64 {
    type Output = Jet<N>;
    // The quotient rule with the numerator's derivatives 0.
    #[allow(clippy::suspicious_arithmetic_impl)]
    #[inline(always)]
    fn div(self, o: Jet<N>) -> Jet<N> {
        let re = self / o.re;
        Jet::new(re, o.eps.map(|e| (0.0 - re * e) / o.re))
    }
}

/// The functions of a jet and its chain rule, the same for both kinds.
macro_rules! jet_functions {
    () => {
        #[inline(always)]
        fn constant(v: f64) -> Self {
            Jet::new(v, [0.0; N])
        }
        #[inline(always)]
        fn value(self) -> f64 {
            self.re
        }
        #[inline(always)]
        fn set_value(&mut self, v: f64) {
            self.re = v;
        }
        #[inline(always)]
        fn seeded_lane(v: f64, lane: usize) -> Self {
            Jet::new(v, std::array::from_fn(|i| f64::from(u8::from(i == lane))))
        }
        fn sin(self) -> Self {
            let (s, c) = math::sin_cos(self.re);
            self.chain(s, c)
        }
        fn cos(self) -> Self {
            let (s, c) = math::sin_cos(self.re);
            self.chain(c, -s)
        }
        fn sin_cos(self) -> (Self, Self) {
            let (s, c) = math::sin_cos(self.re);
            (self.chain(s, c), self.chain(c, -s))
        }
        fn sqrt(self) -> Self {
            let r = self.re.sqrt();
            self.chain(r, 0.5 / r)
        }
        fn powi(self, n: i32) -> Self {
            match n {
                0 => Self::constant(1.0),
                _ => self.chain(self.re.powi(n), f64::from(n) * self.re.powi(n - 1)),
            }
        }
        fn tanh(self) -> Self {
            let t = math::tanh(self.re);
            self.chain(t, 1.0 - t * t)
        }
        fn asin(self) -> Self {
            self.chain(math::asin(self.re), 1.0 / (1.0 - self.re * self.re).sqrt())
        }
        fn acos(self) -> Self {
            self.chain(math::acos(self.re), -1.0 / (1.0 - self.re * self.re).sqrt())
        }
        fn atan2(self, x: Self) -> Self {
            let r2 = x.re * x.re + self.re * self.re;
            Jet::new(
                math::atan2(self.re, x.re),
                Self::zip(self.eps, x.eps, |dy, dx| (x.re * dy - self.re * dx) / r2),
            )
        }
        fn root(x: f64, h_x: f64, residual: impl FnOnce(Self) -> Self) -> Self {
            Jet::new(x, residual(Self::constant(x)).eps.map(|e| -e / h_x))
        }
    };
}

/// After initialization: the parameters are plain f64.
impl<const N: usize> Scalar for Jet<N, Fixed> {
    type P = f64;
    type Moving = Jet<N, Moving>;
    #[inline(always)]
    fn param(p: f64) -> Self {
        Self::constant(p)
    }
    #[inline(always)]
    fn param_mut(_: &mut f64) -> Option<&mut Self> {
        None
    }
    #[inline(always)]
    fn of_one<const K: usize, F: OfOne<f64, K>>(self, f: &F) -> [Self; K] {
        f.at(Jet::<1>::new(self.re, [1.0]))
            .map(|y| Jet::new(y.re, self.eps.map(|e| y.eps[0] * e)))
    }
    jet_functions!();
}

/// In Initialization Mode: the parameters carry derivatives like every other number.
impl<const N: usize> Scalar for Jet<N, Moving> {
    type P = Self;
    type Moving = Self;
    #[inline(always)]
    fn param(p: Self) -> Self {
        p
    }
    #[inline(always)]
    fn param_mut(p: &mut Self) -> Option<&mut Self> {
        Some(p)
    }
    /// The parameters move too: `f` runs over every direction.
    #[inline(always)]
    fn of_one<const K: usize, F: OfOne<Self, K>>(self, f: &F) -> [Self; K] {
        f.at(self)
    }
    jet_functions!();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The root of x^3 + p x - q = 0 moves as the implicit function theorem says:
    /// dx/dp = -x / (3x^2 + p), dx/dq = 1 / (3x^2 + p).
    #[test]
    fn a_root_moves_with_the_knowns() {
        let (p, q) = (2.0, 5.0);
        let mut x: f64 = 1.0;
        for _ in 0..50 {
            x -= (x * x * x + p * x - q) / (3.0 * x * x + p);
        }
        let h_x = 3.0 * x * x + p;
        let (pj, qj) = (Jet::<2>::new(p, [1.0, 0.0]), Jet::<2>::new(q, [0.0, 1.0]));
        let root = Jet::root(x, h_x, |x| x * x * x + pj * x - qj);
        assert_eq!(root.re.to_bits(), x.to_bits());
        assert!((root.eps[0] + x / h_x).abs() < 1e-15);
        assert!((root.eps[1] - 1.0 / h_x).abs() < 1e-15);
        assert_eq!(f64::root(x, h_x, |x| x).to_bits(), x.to_bits());
    }

    /// Each lane of a jet is the one-lane jet seeded with that lane's direction, bit for bit:
    /// the same arithmetic, lane by lane.
    #[test]
    fn each_lane_is_the_dual_number_of_its_direction() {
        fn f<S: Scalar>(x: S, y: S) -> S {
            let (s, c) = (x * y).sin_cos();
            (s * x + c / y).atan2(y - x * 0.5) + (x * x + y * y).sqrt().tanh() * (x / y).powi(3)
                - (x * 0.1).asin()
                + (y * 0.2).acos()
        }
        let (x, y) = (0.7, 1.9);
        let seeds = [(1.0, 0.0), (0.0, 1.0), (0.3, -2.0)];
        let jet = f(
            Jet::<3>::new(x, seeds.map(|s| s.0)),
            Jet::<3>::new(y, seeds.map(|s| s.1)),
        );
        assert_eq!(jet.re.to_bits(), f(x, y).to_bits(), "the value is f64's");
        for (lane, (dx, dy)) in seeds.iter().enumerate() {
            let one = f(Jet::<1>::new(x, [*dx]), Jet::<1>::new(y, [*dy]));
            assert_eq!(jet.eps[lane].to_bits(), one.eps[0].to_bits(), "lane {lane}");
        }
        // And the dual number agrees with a central difference along (1, 0).
        let h = 1e-6;
        let central = (f(x + h, y) - f(x - h, y)) / (2.0 * h);
        assert!((jet.eps[0] - central).abs() < 1e-8 * central.abs().max(1.0));
    }

    /// A function of one number with a parameter, for `of_one`.
    struct Bent<P> {
        k: P,
    }

    impl<P: Copy> OfOne<P, 2> for Bent<P> {
        fn at<T: Scalar<P = P>>(&self, x: T) -> [T; 2] {
            let (s, c) = x.sin_cos();
            [s * self.k + (x * x + 1.0).sqrt(), c / (x * self.k + 2.0)]
        }
    }

    /// `of_one` over jets after initialization (one direction, then the chain rule) gives the
    /// values of f64 bit for bit and the derivatives of every direction carried through `f`
    /// to rounding; in Initialization Mode, where the parameter moves too, `f` runs over every
    /// direction (the parameter's derivative included).
    #[test]
    fn a_function_of_one_number_is_chained_along_its_directions() {
        let (x, k) = (0.8, 1.7);
        let direct = Bent { k }.at(Jet::<3>::new(x, [1.0, -0.5, 0.0]));
        let chained = Jet::<3>::new(x, [1.0, -0.5, 0.0]).of_one(&Bent { k });
        let plain = x.of_one(&Bent { k });
        for i in 0..2 {
            assert_eq!(chained[i].re.to_bits(), plain[i].to_bits());
            for (a, b) in chained[i].eps.iter().zip(&direct[i].eps) {
                assert!(
                    (a - b).abs() <= 4.0 * f64::EPSILON * b.abs(),
                    "{a} against {b}"
                );
            }
            assert_eq!(chained[i].eps[2], 0.0);
        }
        let moving = Jet::<2, Moving>::new(x, [1.0, 0.0]);
        let kk = Jet::<2, Moving>::new(k, [0.0, 1.0]);
        let both = moving.of_one(&Bent { k: kk });
        let h = 1e-6;
        let dk = (Bent { k: k + h }.at(x)[0] - Bent { k: k - h }.at(x)[0]) / (2.0 * h);
        assert!(
            (both[0].eps[1] - dk).abs() < 1e-8,
            "{} against {dk}",
            both[0].eps[1]
        );
    }
}
