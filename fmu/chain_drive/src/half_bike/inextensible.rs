//! The inextensible chain: a taut run holds its length, a slack run goes taut in a plastic
//! impact.

use super::{dot, heading_positive, Bike, Inputs, Motion, Rest, Switch, V3};
use super::{FREE, LOWER, UPPER};
use crate::geometry::Runs;
use fmu_runtime::{Invalid, Scalar};

impl<S: Scalar> Bike<S> {
    /// Inextensible chain: in a taut mode the run's length is held, `th_ds` follows from the
    /// other coordinates (its own state is not used) and the tension is the constraint force;
    /// slack (FREE): no chain force.
    #[inline(always)]
    pub fn inextensible(
        &self,
        q: V3<S>,
        w: V3<S>,
        u: Inputs<S>,
        rest: Rest<S>,
        mode: i32,
    ) -> Motion<S> {
        let zero = S::constant(0.0);
        let r = self.frame.runs(q[1]);
        let (a_u, a_l) = self.gradients(&r);
        if mode != UPPER && mode != LOWER {
            let (l_u, l_l) = self.lengths_at(&r, q);
            let (f, power) = self.applied(q, w, u);
            return Motion {
                q,
                speeds: w,
                dw: self.m_inv(f),
                t_u: zero,
                t_l: zero,
                e_u: l_u - rest.l_u0,
                e_l: l_l - rest.l_l0,
                energy_chain: zero,
                power_dissipated: power,
                indicators: [l_u - rest.l_u0, l_l - rest.l_l0],
            };
        }
        let (qq, ww) = self.on_constraint(&r, q, w, rest, mode);
        let (a, g2) = if mode == UPPER {
            (a_u, r.g_u[2])
        } else {
            (a_l, r.g_l[2])
        };
        let (f, power) = self.applied(qq, ww, u);
        let m_a = self.m_inv(a);
        // A a_q + G'' w_sa^2 = 0 with M a_q = f - lambda A^T.
        let lambda = (dot(a, self.m_inv(f)) + g2 * ww[1] * ww[1]) / dot(a, m_a);
        let dw = [0, 1, 2].map(|i| self.m_inv(f)[i] - lambda * m_a[i]);
        let (l_u, l_l) = self.lengths_at(&r, qq);
        let (e_u, e_l) = (l_u - rest.l_u0, l_l - rest.l_l0);
        let (t_u, t_l, other) = if mode == UPPER {
            (lambda, zero, e_l)
        } else {
            (zero, lambda, e_u)
        };
        Motion {
            q: qq,
            speeds: ww,
            dw,
            t_u,
            t_l,
            e_u,
            e_l,
            energy_chain: zero,
            power_dissipated: power,
            indicators: [lambda, other],
        }
    }

    /// Positions and speeds with `th_ds` and `w_ds` from the taut run's constraint
    /// (`L` is linear in `th_ds`, with slope `+r_ds` upper and `-r_ds` lower).
    #[inline(always)]
    fn on_constraint(
        &self,
        r: &Runs<S>,
        q: V3<S>,
        w: V3<S>,
        rest: Rest<S>,
        mode: i32,
    ) -> (V3<S>, V3<S>) {
        let l = &self.frame;
        let wheel = l.r_ws * (q[1] + q[2]);
        let (th_ds, w_ds) = if mode == UPPER {
            (
                (rest.l_u0 - r.g_u[0] + wheel) / l.r_ds,
                ((l.r_ws - r.g_u[1]) * w[1] + l.r_ws * w[2]) / l.r_ds,
            )
        } else {
            (
                (r.g_l[0] + wheel - rest.l_l0) / l.r_ds,
                ((r.g_l[1] + l.r_ws) * w[1] + l.r_ws * w[2]) / l.r_ds,
            )
        };
        ([th_ds, q[1], q[2]], [w_ds, w[1], w[2]])
    }
}

impl Bike<f64> {
    /// Inextensible chain: a taut run goes slack when its tension would turn negative; a slack
    /// run going taut is a plastic impact, `w+ = w - M^-1 A^T (A w)/(A M^-1 A^T)`, which keeps
    /// the generalized momentum along every motion the run allows and loses
    /// `(A w)^2 / (2 A M^-1 A^T)`. Both runs taut at once means the slack is too small.
    #[inline(always)]
    pub fn inextensible_switch(
        &self,
        q: V3,
        w: V3,
        u: Inputs,
        rest: Rest,
        mode: i32,
    ) -> Result<Option<Switch>, Invalid> {
        let r = self.frame.runs(q[1]);
        let scale = self.speed_scale(&r, w);
        let (a_u, a_l) = self.gradients(&r);
        if mode == UPPER || mode == LOWER {
            let m = self.inextensible(q, w, u, rest, mode);
            let lambda = m.indicators[0];
            if lambda < 0.0 {
                return Ok(Some(Switch {
                    mode: FREE,
                    q: m.q,
                    w: m.speeds,
                    impact: None,
                }));
            }
            let (other, a) = if mode == UPPER {
                (m.e_l, a_l)
            } else {
                (m.e_u, a_u)
            };
            if heading_positive(other, dot(a, m.speeds), 0.0, scale) {
                return Err(Invalid::new(
                    "slack",
                    self.slack,
                    format!(
                        "both runs are taut at theta_sa = {}: the swing arm's travel takes up more than the slack",
                        q[1]
                    ),
                ));
            }
            return Ok(None);
        }
        let free = self.inextensible(q, w, u, rest, FREE);
        for (run, e, a, g2) in [
            (UPPER, free.e_u, a_u, r.g_u[2]),
            (LOWER, free.e_l, a_l, r.g_l[2]),
        ] {
            let de = dot(a, w);
            let dde = dot(a, free.dw) + g2 * w[1] * w[1];
            // Taut again only while closing: a run a hair past zero but opening stays slack.
            if !(e >= 0.0 && heading_positive(0.0, de, dde, scale)) {
                continue;
            }
            let m_a = self.m_inv(a);
            let p = dot(a, m_a);
            let closing = de.max(0.0);
            let w_plus = [0, 1, 2].map(|i| w[i] - m_a[i] * closing / p);
            let (q_plus, w_plus) = self.on_constraint(&r, q, w_plus, rest, run);
            return Ok(Some(Switch {
                mode: run,
                q: q_plus,
                w: w_plus,
                impact: (closing > 0.0).then(|| 0.5 * closing * closing / p),
            }));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::super::HalfBike;
    use super::*;

    /// A slack run that reaches its rest length while moving along itself (zero rate) goes
    /// taut only if its extension is accelerating. The acceleration is set with the engine
    /// torque and checked by finite differences of the run's length along the free motion
    /// `q + w t + dw t^2 / 2`; the swing arm turns at 3 rad/s, so the centripetal part
    /// `G'' w_sa^2` of that acceleration counts nine times its coefficient.
    #[test]
    fn a_grazing_run_goes_taut_only_if_its_extension_accelerates() {
        let bike = HalfBike::default().bike();
        let q = [0.3, 0.05, 0.7];
        let r = bike.frame.runs(q[1]);
        let (a_u, _) = bike.gradients(&r);
        let (l_u, l_l) = bike.lengths(q);
        // The upper run exactly at its rest length, the lower one slack.
        let rest = Rest {
            l_u0: l_u,
            l_l0: l_l + 0.01,
        };
        let (w_sa, w_rw) = (3.0, 20.0);
        // The sprocket speed that holds the upper run's rate at zero.
        let w = [-(a_u[1] * w_sa + a_u[2] * w_rw) / a_u[0], w_sa, w_rw];
        let idle = Inputs {
            tau_eng: 0.0,
            tau_load: 0.0,
            c_brake: 0.0,
        };
        let base = dot(a_u, bike.inextensible(q, w, idle, rest, FREE).dw);
        let centripetal = r.g_u[2] * w_sa * w_sa;
        for sign in [1.0, -1.0] {
            let wanted = sign * 0.5 * centripetal.abs();
            // Only the sprocket's row of M^-1 f holds tau_eng: slope r_ds / J_ds.
            let tau_eng = (wanted - centripetal - base) * bike.j_ds / bike.frame.r_ds;
            let u = Inputs { tau_eng, ..idle };
            let dw = bike.inextensible(q, w, u, rest, FREE).dw;
            let extension = |t: f64| {
                let at = [0, 1, 2].map(|i| q[i] + w[i] * t + 0.5 * dw[i] * t * t);
                bike.lengths(at).0 - rest.l_u0
            };
            let rate = (extension(1e-6) - extension(-1e-6)) / 2e-6;
            let h = 1e-3;
            let acceleration = (extension(h) - 2.0 * extension(0.0) + extension(-h)) / (h * h);
            assert!(rate.abs() < 1e-8, "the run's rate {rate} m/s");
            assert!(
                (acceleration - wanted).abs() < 1e-3 * wanted.abs(),
                "the run's acceleration {acceleration} m/s2, set to {wanted}"
            );
            let switch = bike.inextensible_switch(q, w, u, rest, FREE).unwrap();
            assert_eq!(
                switch.map(|s| s.mode),
                (sign > 0.0).then_some(UPPER),
                "extension accelerating at {acceleration} m/s2"
            );
        }
    }
}
