//! Open-belt geometry: the exact belt length, its derivatives, and the sheave constraint.

use fmu_runtime::math::{asin, cos};
use std::f64::consts::FRAC_PI_2;

/// The CVT's geometry parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry {
    /// Centre distance.
    pub c: f64,
    pub d1_bar: f64,
    pub d2_bar: f64,
    pub s1_bar: f64,
    pub s2_bar: f64,
    pub c1: f64,
    pub c2: f64,
}

/// `sin(beta)` beyond which the geometry is rejected (the belt would nearly wrap one pulley).
pub const MAX_SIN_BETA: f64 = 0.95;

/// The open-belt length `L = 2C cos(beta) + (pi/2)(D1 + D2) + beta (D2 - D1)` with
/// `sin(beta) = (D2 - D1)/(2C)`.
pub fn length(c: f64, d1: f64, d2: f64) -> f64 {
    let beta = asin((d2 - d1) / (2.0 * c));
    2.0 * c * cos(beta) + FRAC_PI_2 * (d1 + d2) + beta * (d2 - d1)
}

/// `beta`, the angle of the straight spans.
pub fn beta(c: f64, d1: f64, d2: f64) -> f64 {
    asin((d2 - d1) / (2.0 * c))
}

/// `(dL/dD1, dL/dD2) = (pi/2 - beta, pi/2 + beta)`: the terms in dbeta cancel.
pub fn length_gradient(beta: f64) -> (f64, f64) {
    (FRAC_PI_2 - beta, FRAC_PI_2 + beta)
}

/// Where the sheaves are and how the constraint ties them, at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Configuration {
    pub s1: f64,
    pub d1: f64,
    pub d2: f64,
    pub beta: f64,
    /// ds1/ds2 along the constraint.
    pub s1p: f64,
    /// d2s1/ds2^2 along the constraint.
    pub s1pp: f64,
    /// rho = D1/D2 = w2/w1 and its derivative d rho/ds2.
    pub rho: f64,
    pub rho_p: f64,
}

impl Geometry {
    pub fn d1(&self, s1: f64) -> f64 {
        self.d1_bar + self.c1 * (s1 - self.s1_bar)
    }

    pub fn d2(&self, s2: f64) -> f64 {
        self.d2_bar + self.c2 * (s2 - self.s2_bar)
    }

    /// The belt length, fixed by the reference diameters.
    pub fn l0(&self) -> f64 {
        length(self.c, self.d1_bar, self.d2_bar)
    }

    /// Whether diameters are positive and the spans are not near-vertical.
    pub fn valid(&self, d1: f64, d2: f64) -> bool {
        d1 > 0.0 && d2 > 0.0 && ((d2 - d1) / (2.0 * self.c)).abs() <= MAX_SIN_BETA
    }

    /// s1 on the belt constraint for a given s2, by Newton from `guess`
    /// (dL/ds1 = (pi/2 - beta) c1 > 0, so the root is unique).
    pub fn solve_s1(&self, s2: f64, guess: f64) -> Option<f64> {
        let (l0, d2) = (self.l0(), self.d2(s2));
        let mut s1 = guess;
        for _ in 0..50 {
            let d1 = self.d1(s1);
            if !self.valid(d1, d2) {
                return None;
            }
            let f = length(self.c, d1, d2) - l0;
            let step = f / ((FRAC_PI_2 - beta(self.c, d1, d2)) * self.c1);
            s1 -= step;
            if step.abs() <= 1e-15 * (1.0 + s1.abs()) {
                return self.valid(self.d1(s1), d2).then_some(s1);
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

    /// The configuration at s2, with s1 on the constraint.
    ///
    /// Implicit differentiation of L(D1(s1), D2(s2)) = L0:
    /// `(pi/2 - beta) c1 ds1 + (pi/2 + beta) c2 ds2 = 0`, so
    /// `s1' = -(c2/c1) (pi/2 + beta)/(pi/2 - beta)`; with `cos(beta) dbeta = (c2 ds2 - c1 ds1)/(2C)`,
    /// `s1'' = -(c2/c1) pi/(pi/2 - beta)^2 * (c2 - c1 s1')/(2C cos(beta))`.
    pub fn configuration(&self, s2: f64, s1: f64) -> Configuration {
        let (d1, d2) = (self.d1(s1), self.d2(s2));
        let beta = beta(self.c, d1, d2);
        let (g1, g2) = length_gradient(beta);
        let k = self.c2 / self.c1;
        let s1p = -k * g2 / g1;
        let dbeta = (self.c2 - self.c1 * s1p) / (2.0 * self.c * cos(beta));
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

#[cfg(test)]
mod tests {
    use super::*;

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
            let s1 = g.solve_s1(s2, 0.0).unwrap();
            let cfg = g.configuration(s2, s1);
            let up = g.solve_s1(s2 + h, s1).unwrap();
            let down = g.solve_s1(s2 - h, s1).unwrap();
            let fd1 = (up - down) / (2.0 * h);
            assert!(
                (fd1 - cfg.s1p).abs() < 1e-8,
                "s2 = {s2}: {fd1} vs {}",
                cfg.s1p
            );
            // s1'' against a central difference of the (checked) slope s1', not the second
            // difference of s1, whose rounding (eps s1 / h^2) would hide an error of 1e-3.
            let hs = 2e-6;
            let slope_at = |x: f64| g.configuration(x, g.solve_s1(x, s1).unwrap()).s1p;
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
        }
    }

    #[test]
    fn newton_finds_both_directions_and_rejects_impossible_geometry() {
        let g = geometry();
        let s1 = g.solve_s1(0.004, 0.0).unwrap();
        assert!(s1 < 0.0, "a larger secondary needs a smaller primary");
        let s2 = g.solve_s2(s1, 0.0).unwrap();
        assert!((s2 - 0.004).abs() < 1e-12);
        // Far beyond: the primary diameter would have to be negative.
        assert!(g.solve_s1(0.2, 0.0).is_none());
    }
}
