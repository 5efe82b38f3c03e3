//! What the start refuses, naming the variable: parameters out of range, a travel the belt
//! cannot reach or that leaves no room, pulleys that overlap somewhere in it.

use crate::belt::MAX_SIN_BETA;
use crate::Cvt;
use fmu_runtime::Invalid;

impl Cvt {
    pub(crate) fn check_parameters(&self) -> Result<(), Invalid> {
        let positive = [
            ("C", self.geometry.c),
            ("D1_bar", self.geometry.d1_bar),
            ("D2_bar", self.geometry.d2_bar),
            ("c1", self.geometry.c1),
            ("c2", self.geometry.c2),
            ("J1", self.j1),
            ("J2", self.j2),
            ("m1", self.m1),
            ("m2", self.m2),
        ];
        for (name, x) in positive {
            if !(x.is_finite() && x > 0.0) {
                return Err(Invalid::new(name, x, "must be positive"));
            }
        }
        if !self
            .geometry
            .valid(self.geometry.d1_bar, self.geometry.d2_bar)
        {
            return Err(Invalid::new(
                "C",
                self.geometry.c,
                format!(
                    "too short for D1_bar = {} and D2_bar = {}: |D2 - D1|/(2C) must be <= {}",
                    self.geometry.d1_bar, self.geometry.d2_bar, MAX_SIN_BETA
                ),
            ));
        }
        for (lo, hi, lo_name, bar, bar_name) in [
            (
                self.s1_min,
                self.s1_max,
                "s1_min",
                self.geometry.s1_bar,
                "s1_bar",
            ),
            (
                self.s2_min,
                self.s2_max,
                "s2_min",
                self.geometry.s2_bar,
                "s2_bar",
            ),
        ] {
            if lo >= hi {
                return Err(Invalid::new(
                    lo_name,
                    lo,
                    format!("must be below the maximum {hi}"),
                ));
            }
            if !(lo <= bar && bar <= hi) {
                return Err(Invalid::new(
                    bar_name,
                    bar,
                    format!("must lie in the travel [{lo}, {hi}]"),
                ));
            }
        }
        Ok(())
    }

    /// The travel of s2 that `calculated` gave, `[s2_lo, s2_hi]`: each end must have a belt
    /// position for both sheaves, and the travel some room.
    pub(crate) fn check_travel(&self) -> Result<(f64, f64), Invalid> {
        let g = self.geometry;
        let impossible = |name: &'static str, x: f64| {
            Invalid::new(name, x, "puts the belt geometry out of range (D <= 0, spans near vertical, or no belt position)")
        };
        // NaN: the belt cannot put s2 where the other sheave's limit is.
        if self.s2_lo.is_nan() {
            return Err(impossible("s1_max", self.s1_max));
        }
        if self.s2_hi.is_nan() {
            return Err(impossible("s1_min", self.s1_min));
        }
        let (lo, hi) = (self.s2_lo, self.s2_hi);
        for (name, s2) in [("s2_min", lo), ("s2_max", hi)] {
            g.solve_s1(self.l0, s2)
                .ok_or_else(|| impossible(name, s2))?;
        }
        if lo >= hi {
            return Err(Invalid::new(
                "s2_min",
                self.s2_min,
                format!("the travel limits leave no room: s2 in [{lo}, {hi}]"),
            ));
        }
        Ok((lo, hi))
    }

    /// The pulleys must not overlap anywhere in the sheave travel: C > (D1 + D2)/2. The belt
    /// geometry accepts overlapping pulleys (C = 0.05 m with the default 80/120 mm diameters
    /// gives a belt length and a ratio), so it is checked here, on 201 points of the travel and
    /// its ends, where D1 + D2 is largest.
    pub(crate) fn check_pulleys_apart(&self, lo: f64, hi: f64) -> Result<(), Invalid> {
        let g = self.geometry;
        let mut largest = (f64::NEG_INFINITY, lo);
        for k in 0..=200 {
            let s2 = lo + (hi - lo) * f64::from(k) / 200.0;
            let Some(on) = g.solve_s1(self.l0, s2) else {
                continue;
            };
            let s1 = on.s1;
            let half_sum = 0.5 * (g.d1(s1) + g.d2(s2));
            if half_sum > largest.0 {
                largest = (half_sum, s2);
            }
        }
        let (half_sum, s2) = largest;
        if g.c <= half_sum {
            return Err(Invalid::new(
                "C",
                g.c,
                format!(
                    "the pulleys overlap: the centre distance must exceed (D1 + D2)/2, which reaches {half_sum} m at s2 = {s2} m in the sheave travel [{lo}, {hi}]"
                ),
            ));
        }
        Ok(())
    }
}
