//! Open-belt geometry: the exact belt length, its derivatives, and the sheave constraint.

use fmu_runtime::math::asin;
use fmu_runtime::{Param, Scalar, Variables};
use std::f64::consts::{FRAC_PI_2, PI};

/// The CVT's geometry parameters; the start values are a scooter-sized CVT's: 250 mm centre
/// distance, 80/120 mm working diameters. Generic over the number type of the CVT that embeds
/// it: `f64` for the simulation, jets for its exact derivatives.
#[derive(Debug, Clone, Copy, PartialEq, Variables)]
pub struct Geometry<S: Scalar = f64> {
    #[parameter(
        name = "C",
        start = 0.25,
        unit = "m",
        min = 0.0,
        describe = "Centre distance of the pulleys"
    )]
    pub c: Param<S>,
    #[parameter(
        name = "D1_bar",
        start = 0.08,
        unit = "m",
        min = 0.0,
        describe = "Primary working diameter at s1 = s1_bar"
    )]
    pub d1_bar: Param<S>,
    #[parameter(
        name = "D2_bar",
        start = 0.12,
        unit = "m",
        min = 0.0,
        describe = "Secondary working diameter at s2 = s2_bar"
    )]
    pub d2_bar: Param<S>,
    #[parameter(
        unit = "m",
        describe = "Primary sheave position of the reference configuration"
    )]
    pub s1_bar: Param<S>,
    #[parameter(
        unit = "m",
        describe = "Secondary sheave position of the reference configuration"
    )]
    pub s2_bar: Param<S>,
    #[parameter(start = 4.0, min = 0.0, describe = "dD1/ds1 (> 0)")]
    pub c1: Param<S>,
    #[parameter(start = 4.0, min = 0.0, describe = "dD2/ds2 (> 0)")]
    pub c2: Param<S>,
}

/// `sin(beta)` beyond which the geometry is rejected (the belt would nearly wrap one pulley).
pub const MAX_SIN_BETA: f64 = 0.95;

/// The open-belt length `L = 2C cos(beta) + (pi/2)(D1 + D2) + beta (D2 - D1)` with
/// `sin(beta) = (D2 - D1)/(2C)`.
pub fn length<S: Scalar>(c: Param<S>, d1: S, d2: S) -> S {
    let beta = ((d2 - d1) / (c * 2.0)).asin();
    c * 2.0 * beta.cos() + (d1 + d2) * FRAC_PI_2 + beta * (d2 - d1)
}

/// `beta`, the angle of the straight spans.
pub fn beta(c: f64, d1: f64, d2: f64) -> f64 {
    asin((d2 - d1) / (2.0 * c))
}

/// `(dL/dD1, dL/dD2) = (pi/2 - beta, pi/2 + beta)`: the terms in dbeta cancel.
pub fn length_gradient<S: Scalar>(beta: S) -> (S, S) {
    (S::constant(FRAC_PI_2) - beta, beta + FRAC_PI_2)
}

/// A point of the belt constraint: s1, and the angle of the straight spans there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OnBelt<S: Scalar = f64> {
    pub s1: S,
    pub beta: S,
    pub cos_beta: S,
}

/// Where the sheaves are and how the constraint ties them, at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Configuration<S: Scalar = f64> {
    pub s1: S,
    pub d1: S,
    pub d2: S,
    pub beta: S,
    /// ds1/ds2 along the constraint.
    pub s1p: S,
    /// d2s1/ds2^2 along the constraint.
    pub s1pp: S,
    /// rho = D1/D2 = w2/w1 and its derivative d rho/ds2.
    pub rho: S,
    pub rho_p: S,
}

impl<S: Scalar> Geometry<S> {
    /// The values, without their derivatives: what the f64 iterations solve on.
    #[inline(always)]
    pub fn values(&self) -> Geometry {
        Geometry {
            c: self.c.value(),
            d1_bar: self.d1_bar.value(),
            d2_bar: self.d2_bar.value(),
            s1_bar: self.s1_bar.value(),
            s2_bar: self.s2_bar.value(),
            c1: self.c1.value(),
            c2: self.c2.value(),
        }
    }

    /// The same geometry over the parameters' own number type (the travel limits, the belt
    /// length: computed from parameters alone).
    #[inline(always)]
    pub fn params(&self) -> Geometry<Param<S>> {
        Geometry {
            c: self.c,
            d1_bar: self.d1_bar,
            d2_bar: self.d2_bar,
            s1_bar: self.s1_bar,
            s2_bar: self.s2_bar,
            c1: self.c1,
            c2: self.c2,
        }
    }

    pub fn d1(&self, s1: S) -> S {
        self.d1_bar + self.c1 * (s1 - self.s1_bar)
    }

    pub fn d2(&self, s2: S) -> S {
        self.d2_bar + self.c2 * (s2 - self.s2_bar)
    }

    /// The belt length, fixed by the reference diameters.
    pub fn l0(&self) -> Param<S> {
        length::<Param<S>>(self.c, self.d1_bar, self.d2_bar)
    }

    /// The point on the belt at `s2`: s1 from [`Geometry::solve_s1`], moving with the knowns
    /// by the implicit function theorem. The constraint `F = L(D1(s1), D2(s2)) - L0 = 0` keeps
    /// holding, so `dF + (pi/2 - beta) c1 ds1 = 0`, `dF` taken with s1 held. The angle the
    /// iteration carries out follows likewise from `sin(beta) = (D2 - D1)/(2C)`.
    #[inline(always)]
    pub fn on_belt(&self, l0: Param<S>, s2: S) -> Option<OnBelt<S>> {
        let on = self.values().solve_s1(l0.value(), s2.value())?;
        let s1 = S::root(on.s1, (FRAC_PI_2 - on.beta) * self.c1.value(), |s1| {
            length::<S>(self.c, self.d1(s1), self.d2(s2)) - l0
        });
        let beta = S::root(on.beta, on.cos_beta, |beta| {
            beta.sin() - (self.d2(s2) - self.d1(s1)) / (self.c * 2.0)
        });
        let cos_beta = S::root(on.cos_beta, 1.0, |cos_beta| cos_beta - beta.cos());
        Some(OnBelt { s1, beta, cos_beta })
    }

    /// s2 on the belt at `s1`: from [`Geometry::solve_s2`] started at `s2_bar`, moving with
    /// the knowns by `dF + (pi/2 + beta) c2 ds2 = 0` (`dF` with s2 held).
    pub fn s2_on_belt(&self, s1: S) -> Option<S> {
        let g = self.values();
        let s2 = g.solve_s2(s1.value(), g.s2_bar)?;
        let dl_dd2 = FRAC_PI_2 + beta(g.c, g.d1(s1.value()), g.d2(s2));
        Some(S::root(s2, dl_dd2 * g.c2, |s2| {
            length::<S>(self.c, self.d1(s1), self.d2(s2)) - self.l0()
        }))
    }

    /// Implicit differentiation of L(D1(s1), D2(s2)) = L0:
    /// `(pi/2 - beta) c1 ds1 + (pi/2 + beta) c2 ds2 = 0`, so
    /// `s1' = -(c2/c1) (pi/2 + beta)/(pi/2 - beta)`; with `cos(beta) dbeta = (c2 ds2 - c1 ds1)/(2C)`,
    /// `s1'' = -(c2/c1) pi/(pi/2 - beta)^2 * (c2 - c1 s1')/(2C cos(beta))`.
    pub fn configuration(&self, s2: S, on: OnBelt<S>) -> Configuration<S> {
        let OnBelt { s1, beta, cos_beta } = on;
        let (d1, d2) = (self.d1(s1), self.d2(s2));
        let (g1, g2) = length_gradient(beta);
        let k = self.c2 / self.c1;
        let s1p = -k * g2 / g1;
        let dbeta = (self.c2 - self.c1 * s1p) / (self.c * 2.0 * cos_beta);
        let s1pp = -k * std::f64::consts::PI / (g1 * g1) * dbeta;
        let rho = d1 / d2;
        let rho_p = (self.c1 * s1p * d2 - d1 * self.c2) / (d2 * d2);
        Configuration {
            s1,
            d1,
            d2,
            beta,
            s1p,
            s1pp,
            rho,
            rho_p,
        }
    }
}

impl Geometry {
    /// Whether diameters are positive and the spans are not near-vertical.
    pub fn valid(&self, d1: f64, d2: f64) -> bool {
        d1 > 0.0 && d2 > 0.0 && ((d2 - d1) / (2.0 * self.c)).abs() <= MAX_SIN_BETA
    }

    /// s1 on the belt constraint `L(D1(s1), D2(s2)) = l0` for a given s2, and the span angle
    /// there.
    ///
    /// Halley's method, started from the root of the length to second order in beta,
    /// `L ~ 2C + (pi/2)(D1 + D2) + (D2 - D1)^2/(4C)`, which is explicit (a few 1e-7 m off).
    /// With `f(s1) = L - l0`, `sin(beta) = (D2 - D1)/(2C)` and `dbeta/ds1 = -c1/(2C cos(beta))`:
    /// - `f' = (pi/2 - beta) c1 > 0`, so the root is unique;
    /// - `f'' = c1^2/(2C cos(beta)) > 0`;
    /// - `f''' = -c1^3 sin(beta)/(4C^2 cos(beta)^3)`.
    ///
    /// After a Halley step `delta` the error left is about
    /// `|f'''/(6 f') - (f''/(2 f'))^2| |delta|^3`; the iteration stops once that is below
    /// 1e-16 m, where a further step would move s1 by rounding only. From the start above that
    /// is one iteration, one `asin`; `cos(beta)` is `sqrt(1 - sin^2)`.
    pub fn solve_s1(&self, l0: f64, s2: f64) -> Option<OnBelt> {
        let (c, c1, d2) = (self.c, self.c1, self.d2(s2));
        // u = D2 - D1 solves u^2/(4C) - (pi/2) u + (pi D2 + 2C - l0) = 0; the small root.
        let q = PI * PI / 4.0 - (PI * d2 + 2.0 * c - l0) / c;
        let mut s1 = if q >= 0.0 {
            let u = 2.0 * c * (FRAC_PI_2 - q.sqrt());
            self.s1_bar + (d2 - u - self.d1_bar) / c1
        } else {
            self.s1_bar
        };
        for _ in 0..50 {
            let d1 = self.d1(s1);
            if !self.valid(d1, d2) {
                return None;
            }
            let sin_beta = (d2 - d1) / (2.0 * c);
            let beta = asin(sin_beta);
            let cos_beta = (1.0 - sin_beta * sin_beta).sqrt();
            let f = 2.0 * c * cos_beta + FRAC_PI_2 * (d1 + d2) + beta * (d2 - d1) - l0;
            let dbeta_ds1 = -c1 / (2.0 * c * cos_beta);
            let f1 = (FRAC_PI_2 - beta) * c1;
            let f2 = -c1 * dbeta_ds1;
            let f3 = f2 * sin_beta / cos_beta * dbeta_ds1;
            let newton = f / f1;
            let step = newton / (1.0 - 0.5 * newton * f2 / f1);
            s1 -= step;
            let k = f2 / (2.0 * f1);
            if (f3 / (6.0 * f1) - k * k).abs() * (step * step * step).abs() <= 1e-16 {
                // The angle follows s1: beta(sin) to second order in the step.
                let (dbeta, d1) = (-dbeta_ds1 * step, self.d1(s1));
                let sin_beta = (d2 - d1) / (2.0 * c);
                return self.valid(d1, d2).then_some(OnBelt {
                    s1,
                    beta: beta + dbeta + 0.5 * sin_beta / cos_beta * dbeta * dbeta,
                    cos_beta: (1.0 - sin_beta * sin_beta).sqrt(),
                });
            }
        }
        None
    }

    /// s2 on the belt constraint for a given s1 (for the travel limits of sheave 1).
    pub fn solve_s2(&self, s1: f64, guess: f64) -> Option<f64> {
        let (l0, d1) = (self.l0(), self.d1(s1));
        let mut s2 = guess;
        for _ in 0..50 {
            let d2 = self.d2(s2);
            if !self.valid(d1, d2) {
                return None;
            }
            let f = length(self.c, d1, d2) - l0;
            let step = f / ((FRAC_PI_2 + beta(self.c, d1, d2)) * self.c2);
            s2 -= step;
            if step.abs() <= 1e-15 * (1.0 + s2.abs()) {
                return self.valid(d1, self.d2(s2)).then_some(s2);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fmu_runtime::math::cos;

    fn geometry() -> Geometry {
        Geometry {
            c: 0.25,
            d1_bar: 0.08,
            d2_bar: 0.12,
            s1_bar: 0.0,
            s2_bar: 0.0,
            c1: 4.0,
            c2: 3.0,
        }
    }

    #[test]
    fn length_gradient_matches_finite_differences() {
        let (c, h) = (0.25, 1e-7);
        for (d1, d2) in [(0.08, 0.12), (0.15, 0.05), (0.1, 0.1), (0.03, 0.2)] {
            let b = beta(c, d1, d2);
            let (g1, g2) = length_gradient(b);
            let fd1 = (length(c, d1 + h, d2) - length(c, d1 - h, d2)) / (2.0 * h);
            let fd2 = (length(c, d1, d2 + h) - length(c, d1, d2 - h)) / (2.0 * h);
            assert!(
                (fd1 - g1).abs() < 1e-7 && (fd2 - g2).abs() < 1e-7,
                "{d1} {d2}"
            );
        }
    }

    #[test]
    fn seed_belt_formula_differs_from_the_open_belt_length() {
        // The seed prints 2C + (2/pi)(D1 + D2) + (D2 - D1)^2/(4C); the usual approximation has
        // pi/2, and agrees with the exact length to second order in beta.
        let (c, d1, d2) = (0.25, 0.08, 0.12);
        let seed = 2.0 * c + 2.0 / std::f64::consts::PI * (d1 + d2) + (d2 - d1).powi(2) / (4.0 * c);
        let approx = 2.0 * c + FRAC_PI_2 * (d1 + d2) + (d2 - d1).powi(2) / (4.0 * c);
        let exact = length(c, d1, d2);
        assert!((approx - exact).abs() < 1e-6, "{approx} {exact}");
        assert!((seed - exact).abs() > 0.1, "{seed} {exact}");
    }

    #[test]
    fn constraint_derivatives_match_finite_differences() {
        let g = geometry();
        let h = 1e-6;
        for k in -8..=8 {
            let s2 = k as f64 * 0.001;
            let on = g.solve_s1(g.l0(), s2).unwrap();
            let cfg = g.configuration(s2, on);
            let up = g.solve_s1(g.l0(), s2 + h).unwrap().s1;
            let down = g.solve_s1(g.l0(), s2 - h).unwrap().s1;
            let fd1 = (up - down) / (2.0 * h);
            assert!(
                (fd1 - cfg.s1p).abs() < 1e-8,
                "s2 = {s2}: {fd1} vs {}",
                cfg.s1p
            );
            // s1'' against a central difference of the (checked) slope s1', not the second
            // difference of s1, whose rounding (eps s1 / h^2) would hide an error of 1e-3.
            let hs = 2e-6;
            let slope_at = |x: f64| g.configuration(x, g.solve_s1(g.l0(), x).unwrap()).s1p;
            let fd2 = (slope_at(s2 + hs) - slope_at(s2 - hs)) / (2.0 * hs);
            // Measured: at most 1.3e-9 of |s1''|; the bound leaves a margin of 15.
            assert!(
                (fd2 - cfg.s1pp).abs() < 2e-8 * cfg.s1pp.abs(),
                "s2 = {s2}: {fd2} vs {}",
                cfg.s1pp
            );
            let rho = |s2: f64, s1: f64| g.d1(s1) / g.d2(s2);
            let fdr = (rho(s2 + h, up) - rho(s2 - h, down)) / (2.0 * h);
            assert!((fdr - cfg.rho_p).abs() < 1e-7, "s2 = {s2}");
            assert!((length(g.c, cfg.d1, cfg.d2) - g.l0()).abs() < 1e-14);
            // The angle carried out of the solve is the one at the final s1.
            let exact = beta(g.c, cfg.d1, cfg.d2);
            assert!((on.beta - exact).abs() < 1e-15 && (on.cos_beta - cos(exact)).abs() < 1e-15);
        }
    }

    #[test]
    fn newton_converges_on_steep_spans_and_odd_geometry() {
        // Far from the reference diameters the second-order start is poor: Newton still lands
        // on the constraint, to rounding.
        for (c, d1_bar, d2_bar, c1, c2) in [
            (0.25, 0.08, 0.12, 4.0, 3.0),
            (0.1, 0.02, 0.18, 1.0, 9.0),
            (0.06, 0.1, 0.01, 20.0, 0.5),
            (1.0, 0.5, 0.5, 4.0, 4.0),
        ] {
            let g = Geometry {
                c,
                d1_bar,
                d2_bar,
                s1_bar: 0.0,
                s2_bar: 0.0,
                c1,
                c2,
            };
            for k in -10..=10 {
                let s2 = k as f64 * 0.002;
                if let Some(on) = g.solve_s1(g.l0(), s2) {
                    let (d1, d2) = (g.d1(on.s1), g.d2(s2));
                    assert!((length(c, d1, d2) - g.l0()).abs() < 1e-14, "{c} {s2}");
                    assert!((on.beta - beta(c, d1, d2)).abs() < 1e-14, "{c} {s2}");
                } else {
                    // Refused only where no valid position exists: L rises with D1, so a
                    // root needs L below l0 at the smallest valid D1 and above at the largest.
                    let d2 = g.d2(s2);
                    let lo = (d2 - 2.0 * c * MAX_SIN_BETA).max(1e-12);
                    let hi = d2 + 2.0 * c * MAX_SIN_BETA;
                    let has_root =
                        d2 > 0.0 && length(c, lo, d2) < g.l0() && length(c, hi, d2) > g.l0();
                    assert!(!has_root, "refused at C = {c}, s2 = {s2}");
                }
            }
        }
    }

    #[test]
    fn newton_finds_both_directions_and_rejects_impossible_geometry() {
        let g = geometry();
        let s1 = g.solve_s1(g.l0(), 0.004).unwrap().s1;
        assert!(s1 < 0.0, "a larger secondary needs a smaller primary");
        let s2 = g.solve_s2(s1, 0.0).unwrap();
        assert!((s2 - 0.004).abs() < 1e-12);
        // Far beyond: the primary diameter would have to be negative.
        assert!(g.solve_s1(g.l0(), 0.2).is_none());
    }
}
