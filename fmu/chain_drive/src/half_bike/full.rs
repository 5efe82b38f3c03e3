//! The full elastic chain: each run a spring and damper that pulls while taut.

use super::{dot, heading_positive, Bike, Inputs, Motion, Rest, Switch, V3};
use super::{BOTH, FREE, LOWER, UPPER};
use fmu_runtime::Scalar;

impl<S: Scalar> Bike<S> {
    /// Full elastic chain: each run pulls with `k e + c de/dt` while taut (`mode`).
    #[inline(always)]
    pub fn full(&self, q: V3<S>, w: V3<S>, u: Inputs<S>, rest: Rest<S>, mode: i32) -> Motion<S> {
        let r = self.frame.runs(q[1]);
        let ([e_u, e_l], [de_u, de_l], (a_u, a_l)) = self.stretch(&r, q, w, rest);
        let zero = S::constant(0.0);
        let taut_u = mode == UPPER || mode == BOTH;
        let taut_l = mode == LOWER || mode == BOTH;
        let t_u = if taut_u {
            self.k * e_u + self.c * de_u
        } else {
            zero
        };
        let t_l = if taut_l {
            self.k * e_l + self.c * de_l
        } else {
            zero
        };
        let (f, mut power) = self.applied(q, w, u);
        let f = [0, 1, 2].map(|i| f[i] - t_u * a_u[i] - t_l * a_l[i]);
        // A taut run's damper takes c (de/dt)^2. A run stretched but not pulling because its
        // damper would push (k e + c de/dt <= 0, so de/dt < 0) relaxes through its damper: the
        // spring energy it gives up, -k e de/dt >= 0, is dissipated there, not passed to the
        // bodies. (A stretched run that would pull but is not yet taut is a crossing the step
        // has not located yet: nothing to book.)
        for (taut, e, de) in [(taut_u, e_u, de_u), (taut_l, e_l, de_l)] {
            power = power
                + if taut {
                    self.c * de * de
                } else if e.value() > 0.0 && (self.k * e + self.c * de).value() <= 0.0 {
                    -self.k * e * de
                } else {
                    zero
                };
        }
        let positive = |e: S| e.max(zero).powi(2);
        Motion {
            q,
            speeds: w,
            dw: self.m_inv(f),
            t_u,
            t_l,
            e_u,
            e_l,
            energy_chain: self.k * 0.5 * (positive(e_u) + positive(e_l)),
            power_dissipated: power,
            indicators: [
                self.taut_indicator(e_u, de_u),
                self.taut_indicator(e_l, de_l),
            ],
        }
    }

    /// Positive exactly while a run pulls: `e > 0` and `k e + c de/dt > 0`.
    #[inline(always)]
    fn taut_indicator(&self, e: S, de: S) -> S {
        e.min(e + self.c / self.k * de)
    }
}

impl Bike<f64> {
    /// The rate at which chain damping alone would relax a taut run (1/s): `c A M^-1 A^T`.
    #[inline(always)]
    pub fn chain_rate(&self, th_sa: f64) -> f64 {
        let (a_u, _) = self.gradients(&self.frame.runs(th_sa));
        self.c * dot(a_u, self.m_inv(a_u))
    }

    /// The full model's event indicators, as [`Self::full`] reports them, without its
    /// dynamics: the indicators are evaluated more often than the derivatives.
    #[inline(always)]
    pub fn full_indicators(&self, q: V3, w: V3, rest: Rest) -> [f64; 2] {
        let ([e_u, e_l], [de_u, de_l], _) = self.stretch(&self.frame.runs(q[1]), q, w, rest);
        [
            self.taut_indicator(e_u, de_u),
            self.taut_indicator(e_l, de_l),
        ]
    }

    /// Full model: which runs are taut now.
    #[inline(always)]
    pub fn full_switch(&self, q: V3, w: V3, u: Inputs, rest: Rest, mode: i32) -> Option<Switch> {
        let r = self.frame.runs(q[1]);
        let scale = self.speed_scale(&r, w);
        // Rates of the indicators: the accelerations only matter when a run sits at zero at
        // rest, where the chain force is zero whatever the mode.
        let free = self.full(q, w, u, rest, FREE);
        let m = self.full(q, w, u, rest, mode);
        let (a_u, a_l) = self.gradients(&r);
        let curv = |g2: f64| g2 * w[1] * w[1];
        let taut_u = heading_positive(
            m.indicators[0],
            dot(a_u, w),
            dot(a_u, free.dw) + curv(r.g_u[2]),
            scale,
        );
        let taut_l = heading_positive(
            m.indicators[1],
            dot(a_l, w),
            dot(a_l, free.dw) + curv(r.g_l[2]),
            scale,
        );
        let new = match (taut_u, taut_l) {
            (true, true) => BOTH,
            (true, false) => UPPER,
            (false, true) => LOWER,
            (false, false) => FREE,
        };
        (new != mode).then_some(Switch {
            mode: new,
            q,
            w,
            impact: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::HalfBike;
    use super::*;

    /// The full model's indicator of each run is min(e, e + c/k de/dt), from the run lengths
    /// and their gradients; `full_indicators` gives what `full` reports in every mode.
    #[test]
    fn each_run_pulls_exactly_while_its_indicator_is_positive() {
        let bike = HalfBike::default().bike();
        let q = [0.3, 0.05, 0.7];
        let r = bike.frame.runs(q[1]);
        let (a_u, a_l) = bike.gradients(&r);
        let (l_u, l_l) = bike.lengths(q);
        // The upper run stretched by 1 mm, the lower one slack by 2 mm.
        let rest = Rest {
            l_u0: l_u - 1e-3,
            l_l0: l_l + 2e-3,
        };
        let u = Inputs {
            tau_eng: 5.0,
            tau_load: -3.0,
            c_brake: 0.1,
        };
        for w in [[40.0, 0.5, 20.0], [-30.0, -2.0, 10.0]] {
            let expected = [(1e-3, dot(a_u, w)), (-2e-3, dot(a_l, w))]
                .map(|(e, de): (f64, f64)| e.min(e + bike.c / bike.k * de));
            let alone = bike.full_indicators(q, w, rest);
            for (got, want) in alone.iter().zip(expected) {
                assert!((got - want).abs() < 1e-12, "{got} m, expected {want} m");
            }
            for mode in [FREE, UPPER, LOWER, BOTH] {
                assert_eq!(
                    bike.full(q, w, u, rest, mode).indicators,
                    alone,
                    "mode {mode}"
                );
            }
        }
    }
}
