//! The continuous extension of an explicit Runge-Kutta step and the location of zero crossings
//! on it.

use super::*;

impl Erk {
    /// Makes the continuous extension of the last step ready: the derivative at its end, if the
    /// step left it for later, its extra stages (three more evaluations for DOP853 and Verner's
    /// pair, only for a step with a crossing) and, in Hairer's form, its coefficients.
    pub(super) fn prepare_dense(&mut self, sys: &mut impl System) {
        if self.dense_ready {
            return;
        }
        // Every continuous extension weighs the derivative at the step's end.
        self.end_derivative(sys);
        let (n, h, first) = (self.y.len(), self.h0, self.pair.stages());
        let (c, a) = self.pair.extra_stages();
        for (e, (c, a)) in c.iter().zip(a).enumerate() {
            let i = first + e;
            self.stage_states(a, h);
            sys.derivatives(self.t0 + c * h, &self.ys, &mut self.k[i * n..(i + 1) * n]);
        }
        let d = match self.pair.dense {
            Dense::Polynomial { r, .. } => {
                // The coefficient of θ^(m+1), once: a crossing is located with a dozen
                // interpolations, each then a polynomial per state.
                let mut w = [0.0; 16];
                for m in 0..r[0].len() {
                    for (w, r) in w.iter_mut().zip(r) {
                        *w = r[m];
                    }
                    let q = &mut self.r[m * n..(m + 1) * n];
                    Self::weighted(q, &self.k, &w[..r.len()], None, h);
                }
                self.dense_ready = true;
                return;
            }
            Dense::Hairer { d, .. } => d,
        };
        let last = (first - 1) * n;
        for j in 0..n {
            let step = self.y[j] - self.y0[j];
            let spline = h * self.k[j] - step;
            self.r[j] = step;
            self.r[n + j] = spline;
            self.r[2 * n + j] = step - h * self.k[last + j] - spline;
        }
        for (m, d) in d.iter().enumerate() {
            Self::weighted(&mut self.r[(3 + m) * n..(4 + m) * n], &self.k, d, None, h);
        }
        self.dense_ready = true;
    }

    /// The states at `t` within the last step, from the continuous extension (made ready by
    /// [`Erk::step`] when it reports a crossing).
    pub fn interpolate(&self, t: f64, out: &mut [f64]) {
        let (n, h) = (self.y.len(), self.h0);
        let theta = if h == 0.0 { 1.0 } else { (t - self.t0) / h };
        match self.pair.dense {
            Dense::Polynomial { r, .. } => {
                debug_assert!(self.dense_ready, "interpolation before prepare_dense");
                let q = &self.r[..r[0].len() * n];
                match n {
                    1 => powers_n::<1>(out, q, &self.y0, theta),
                    2 => powers_n::<2>(out, q, &self.y0, theta),
                    3 => powers_n::<3>(out, q, &self.y0, theta),
                    4 => powers_n::<4>(out, q, &self.y0, theta),
                    _ => powers_n::<0>(out, q, &self.y0, theta),
                }
            }
            Dense::Hairer { .. } => {
                debug_assert!(self.dense_ready, "interpolation before prepare_dense");
                let (s, s1, r) = (theta, 1.0 - theta, &self.r);
                for (j, out) in out.iter_mut().enumerate() {
                    let c = |m: usize| r[m * n + j];
                    *out = self.y0[j]
                        + s * (c(0)
                            + s1 * (c(1)
                                + s * (c(2) + s1 * (c(3) + s * (c(4) + s1 * (c(5) + s * c(6)))))));
                }
            }
        }
    }

    /// The earliest zero crossing of the indicators inside the last step: a sign change from
    /// `g0` (its start) to `g` (its end), located by the Illinois-modified secant on the dense
    /// output to 100 eps of the time (SUNDIALS' rule, as diffsol had it): the time returned is
    /// the upper end of the last bracket, on the far side of the crossing. An indicator that
    /// ends the step at exactly zero, with no sign change before, is a root at the step's end;
    /// one that starts at zero and leaves it is none (the event was handled where it became
    /// zero).
    pub(super) fn find_root(&mut self, sys: &mut impl System) -> Option<f64> {
        let (mut t_lo, mut t_hi) = (self.t0, self.t);
        let Some(mut index) = earliest(&self.g0, &self.g) else {
            let touch = self.g.contains(&0.0);
            if touch {
                self.prepare_dense(sys);
            }
            return touch.then_some(t_hi);
        };
        self.prepare_dense(sys);
        let tol = 100.0 * f64::EPSILON * (t_hi.abs() + (t_hi - t_lo).abs());
        self.g_lo.copy_from_slice(&self.g0);
        self.g_hi.copy_from_slice(&self.g);
        let mut ym = std::mem::take(&mut self.ym);
        let mut alpha = 1.0;
        let mut last = [false, true];
        let mut i = 0;
        let mut zero_at = None;
        while (t_hi - t_lo).abs() > tol {
            let (g_hi, g_lo) = (self.g_hi[index], self.g_lo[index]);
            let mut t_mid = t_hi - (t_hi - t_lo) * g_hi / (g_hi - alpha * g_lo);
            // Not too close to either end, or the bracket would shrink by almost nothing.
            let fraction = (t_hi - t_lo).abs() / tol;
            let nudge = if fraction > 5.0 { 0.1 } else { 0.5 / fraction };
            if (t_mid - t_lo).abs() < 0.5 * tol {
                t_mid = t_lo + nudge * (t_hi - t_lo);
            }
            if (t_hi - t_mid).abs() < 0.5 * tol {
                t_mid = t_hi - nudge * (t_hi - t_lo);
            }
            self.interpolate(t_mid, &mut ym);
            sys.indicators(t_mid, &ym, &mut self.g_mid);
            let lower = earliest(&self.g_lo, &self.g_mid);
            if let Some(j) = lower {
                // A sign change in (t_lo, t_mid): t_mid becomes the upper end.
                t_hi = t_mid;
                index = j;
                std::mem::swap(&mut self.g_hi, &mut self.g_mid);
            } else if self.g_mid.contains(&0.0) {
                // No sign change before t_mid, but a zero at it.
                zero_at = Some(t_mid);
                break;
            } else {
                t_lo = t_mid;
                std::mem::swap(&mut self.g_lo, &mut self.g_mid);
            }
            // Illinois: an end kept twice in a row has its value halved in the secant.
            last[i % 2] = lower.is_some();
            if i >= 2 {
                alpha = if last[0] != last[1] {
                    1.0
                } else if last[0] {
                    0.5 * alpha
                } else {
                    2.0 * alpha
                };
            }
            i += 1;
        }
        self.ym = ym;
        Some(zero_at.unwrap_or(t_hi))
    }
}

/// `out = y0 + θ (q[0] + θ (q[1] + ...))` with coefficient vectors `q[m]` of `N` states (0: as
/// many as `out` has).
#[inline(always)]
fn powers_n<const N: usize>(out: &mut [f64], q: &[f64], y0: &[f64], theta: f64) {
    let n = if N == 0 { out.len() } else { N };
    let (out, y0) = (&mut out[..n], &y0[..n]);
    out.fill(0.0);
    for q in q.chunks_exact(n).rev() {
        for (out, q) in out.iter_mut().zip(q) {
            *out = *out * theta + q;
        }
    }
    for (out, y0) in out.iter_mut().zip(y0) {
        *out = y0 + theta * *out;
    }
}

/// The indicator whose sign changes from `g0` to `g1` earliest, were each linear in between.
fn earliest(g0: &[f64], g1: &[f64]) -> Option<usize> {
    let mut best = None;
    let mut fraction = 0.0;
    for (i, (&a, &b)) in g0.iter().zip(g1).enumerate() {
        if a * b < 0.0 {
            let q = (b / (b - a)).abs();
            if q > fraction {
                fraction = q;
                best = Some(i);
            }
        }
    }
    best
}
