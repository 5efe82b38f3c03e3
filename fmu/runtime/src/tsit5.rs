//! Tsitouras' explicit Runge-Kutta 5(4) pair with error control, its continuous extension and
//! the location of zero crossings on it.
//!
//! The method is the one diffsol's Tsit45 implements (Ch. Tsitouras, "Runge-Kutta pairs of order
//! 5(4) satisfying only the first column simplifying assumption", Comput. Math. Appl. 62 (2011)
//! 770-775; the double-precision coefficients as OrdinaryDiffEq.jl and diffsol 0.18 list them),
//! and so is the step-size control, so that a tolerance means what it meant with diffsol:
//! - error norm: root mean square of `err_i / (atol + rtol |y_i|)`, `y` at the step's start;
//! - a step is accepted when that norm is below 1; the next step is `h * 0.9 * norm^(-1/5)`,
//!   the factor clamped to [0.5, 2] (an integral controller: no memory of earlier errors, so
//!   the step size is the whole solver state carried from one step to the next);
//! - a step fails after 40 rejections in a row, or when a rejection asks for less than 1e-13 s;
//! - the first step of a segment after a mode change is estimated as in Hairer, Norsett and
//!   Wanner, Solving ODEs I, II.4.
//!
//! Here it is written for a handful of states: plain loops over buffers allocated once, where
//! diffsol's generic code went through dynamically sized matrices (the Gear's doStep spent
//! three quarters of its ~5,900 instructions in diffsol's step).

use crate::math;

/// The number of stages; the last is the derivative at the step's end (first same as last).
const S: usize = 7;

/// Nodes.
const C: [f64; S] = [0.0, 0.161, 0.327, 0.9, 0.9800255409045097, 1.0, 1.0];

/// Stage coefficients `a[i][j]`, `j < i`; the last row is the solution's weights `b`.
const A: [[f64; S - 1]; S] = [
    [0.0; 6],
    [0.161, 0.0, 0.0, 0.0, 0.0, 0.0],
    [-0.008480655492356989, 0.335480655492357, 0.0, 0.0, 0.0, 0.0],
    [
        2.8971530571054935,
        -6.359448489975075,
        4.3622954328695815,
        0.0,
        0.0,
        0.0,
    ],
    [
        5.325864828439257,
        -11.748883564062828,
        7.4955393428898365,
        -0.09249506636175525,
        0.0,
        0.0,
    ],
    [
        5.86145544294642,
        -12.92096931784711,
        8.159367898576159,
        -0.071584973281401,
        -0.028269050394068383,
        0.0,
    ],
    [
        0.09646076681806523,
        0.01,
        0.4798896504144996,
        1.379008574103742,
        -3.290069515436081,
        2.324710524099774,
    ],
];

/// The error estimate's weights: the fifth-order weights less the embedded fourth-order ones.
const E: [f64; S] = [
    -0.0017800110522257774,
    -0.0008164344596567469,
    0.007880878010261995,
    -0.1447110071732629,
    0.5823571654525552,
    -0.45808210592918697,
    0.015151515151515152,
];

/// The continuous extension: stage `i` weighs `R[i][0] θ + R[i][1] θ² + R[i][2] θ³ + R[i][3] θ⁴`
/// at `t0 + θ h` (fourth order; at θ = 1 these are the weights `b`).
const R: [[f64; 4]; S] = [
    [
        1.0,
        -2.763706197274826,
        2.9132554618219126,
        -1.0530884977290216,
    ],
    [0.0, 0.13169999999999998, -0.2234, 0.1017],
    [
        0.0,
        3.9302962368947516,
        -5.941033872131505,
        2.490627285651253,
    ],
    [
        0.0,
        -12.411077166933676,
        30.33818863028232,
        -16.548102889244902,
    ],
    [0.0, 37.50931341651104, -88.1789048947664, 47.37952196281928],
    [
        0.0,
        -27.896526289197286,
        65.09189467479366,
        -34.87065786149661,
    ],
    [0.0, 1.5, -4.0, 2.5],
];

/// Bounds of the step-size factor, and its safety factor.
const SHRINK_MOST: f64 = 0.5;
const GROW_MOST: f64 = 2.0;
const SAFETY: f64 = 0.9;
/// Rejections in a row after which a step fails, and the step below which a rejection fails.
const MAX_REJECTIONS: usize = 40;
const MIN_STEP: f64 = 1e-13;

/// What the method integrates: derivatives and event indicators of the states `y` at `t`.
pub trait System {
    fn derivatives(&mut self, t: f64, y: &[f64], dy: &mut [f64]);
    fn indicators(&mut self, t: f64, y: &[f64], g: &mut [f64]);
}

/// How an accepted step ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stepped {
    /// Inside the interval.
    Inside,
    /// At the stop time.
    Stop,
    /// With an indicator crossing zero (or ending exactly at zero) at this time inside the
    /// step; the step itself is complete.
    Root(f64),
}

/// A failed step: where, and why.
#[derive(Debug)]
pub struct Failed {
    pub t: f64,
    pub reason: String,
    /// The error estimate was not a finite number (the derivatives were not).
    pub not_finite: bool,
}

pub struct Tsit5 {
    rtol: f64,
    atol: f64,
    /// Current time, states, derivative there, indicators there.
    pub t: f64,
    y: Vec<f64>,
    dy: Vec<f64>,
    g: Vec<f64>,
    /// The step size to try next.
    pub h: f64,
    /// The start of the last step: time, states, indicators (its derivative is `k[0]`), and the
    /// length of that step.
    t0: f64,
    y0: Vec<f64>,
    g0: Vec<f64>,
    h0: f64,
    /// Stage derivatives of the last step, stage after stage (`S` rows of `n`).
    k: Vec<f64>,
    /// Scratch: a stage's states, the new states, interpolated states and indicators.
    ys: Vec<f64>,
    ym: Vec<f64>,
    g_lo: Vec<f64>,
    g_hi: Vec<f64>,
    g_mid: Vec<f64>,
}

impl Tsit5 {
    /// For `n` states and `m` event indicators; the only allocation.
    pub fn new(n: usize, m: usize, rtol: f64, atol: f64) -> Self {
        Tsit5 {
            rtol,
            atol,
            t: 0.0,
            y: vec![0.0; n],
            dy: vec![0.0; n],
            g: vec![0.0; m],
            h: 0.0,
            t0: 0.0,
            y0: vec![0.0; n],
            g0: vec![0.0; m],
            h0: 0.0,
            k: vec![0.0; S * n],
            ys: vec![0.0; n],
            ym: vec![0.0; n],
            g_lo: vec![0.0; m],
            g_hi: vec![0.0; m],
            g_mid: vec![0.0; m],
        }
    }

    pub fn y(&self) -> &[f64] {
        &self.y
    }

    /// Starts at `t` with states `y`: the derivative and the indicators are evaluated there.
    pub fn set(&mut self, sys: &mut impl System, t: f64, y: &[f64], h: f64) {
        self.t = t;
        self.h = h;
        self.y.copy_from_slice(y);
        sys.derivatives(t, &self.y, &mut self.dy);
        if !self.g.is_empty() {
            sys.indicators(t, &self.y, &mut self.g);
        }
    }

    /// Goes back to the start of the last step (time, states, derivative, indicators).
    pub fn back_to_start(&mut self) {
        let n = self.y.len();
        self.t = self.t0;
        self.y.copy_from_slice(&self.y0);
        self.dy.copy_from_slice(&self.k[..n]);
        self.g.copy_from_slice(&self.g0);
    }

    /// The start of the last step.
    pub fn start(&self) -> (f64, &[f64]) {
        (self.t0, &self.y0)
    }

    /// The weighted mean square of `v(i)`, weights from the current states.
    fn mean_square(&self, v: impl Fn(usize) -> f64) -> f64 {
        let n = self.y.len();
        let mut sum = 0.0;
        for (i, y) in self.y.iter().enumerate() {
            let e = v(i) / (self.atol + self.rtol * y.abs());
            sum += e * e;
        }
        sum / n as f64
    }

    /// The weighted root mean square of `v(i)`.
    fn norm(&self, v: impl Fn(usize) -> f64) -> f64 {
        self.mean_square(v).sqrt()
    }

    /// A first step from the current state (Hairer, Norsett and Wanner, Solving ODEs I, II.4):
    /// an explicit Euler step shows how fast the derivative changes.
    pub fn first_step(&mut self, sys: &mut impl System) -> f64 {
        let d0 = self.norm(|i| self.y[i]);
        let d1 = self.norm(|i| self.dy[i]);
        let h0 = if d0 < 1e-5 || d1 < 1e-5 {
            1e-6
        } else {
            0.01 * d0 / d1
        };
        for ((ys, y), dy) in self.ys.iter_mut().zip(&self.y).zip(&self.dy) {
            *ys = y + h0 * dy;
        }
        sys.derivatives(self.t + h0, &self.ys, &mut self.ym);
        let d2 = self.norm(|i| self.ym[i] - self.dy[i]) / h0;
        let largest = d1.max(d2);
        let h1 = if largest <= 1e-15 {
            (h0 * 1e-3).max(1e-6)
        } else {
            // (0.01 / largest)^(1 / (order + 1)), order 4 for the embedded error estimate
            math::pow(0.01 / largest, 0.2)
        };
        (100.0 * h0).min(h1)
    }

    /// One accepted step from the current state with the trial step `h`, ending at `stop` if it
    /// would end within `near` of it or beyond. Leaves the proposal for the next step in `h`.
    pub fn step(&mut self, sys: &mut impl System, stop: f64, near: f64) -> Result<Stepped, Failed> {
        let n = self.y.len();
        // Remember the start, for the dense output and for stepping again from here.
        self.t0 = self.t;
        self.y0.copy_from_slice(&self.y);
        self.g0.copy_from_slice(&self.g);
        self.k[..n].copy_from_slice(&self.dy);
        let mut h = self.h;
        let mut rejections = 0;
        let at_stop = loop {
            let to_stop = self.t0 + h >= stop - near;
            if to_stop {
                h = stop - self.t0;
            }
            // The stages at the step's end (c = 1) take its end time exactly.
            let t1 = if to_stop { stop } else { self.t0 + h };
            for i in 1..S {
                let (done, rest) = self.k.split_at_mut(i * n);
                for (j, ys) in self.ys.iter_mut().enumerate() {
                    let mut sum = 0.0;
                    for (s, a) in A[i][..i].iter().enumerate() {
                        sum += a * done[s * n + j];
                    }
                    *ys = self.y0[j] + h * sum;
                }
                let t = if C[i] == 1.0 { t1 } else { self.t0 + C[i] * h };
                sys.derivatives(t, &self.ys, &mut rest[..n]);
            }
            // The last row of `A` is the solution's weights: the last stage's states are the
            // solution, and its derivative is the next step's first stage.
            let k = &self.k;
            // The error is weighed by the states at the step's start (`y`, not yet replaced).
            let error = self.mean_square(|j| {
                let mut e = 0.0;
                for (s, w) in E.iter().enumerate() {
                    e += w * k[s * n + j];
                }
                h * e
            });
            // 0.9 (error^2)^(-1/10): the root mean square to the power -1/(order + 1), order 4.
            let factor = (SAFETY * math::pow(error, -0.1)).clamp(SHRINK_MOST, GROW_MOST);
            if error < 1.0 {
                self.h0 = h;
                self.h = h * factor;
                self.t = t1;
                self.y.copy_from_slice(&self.ys);
                self.dy.copy_from_slice(&self.k[(S - 1) * n..]);
                break to_stop;
            }
            rejections += 1;
            // A derivative that is not a finite number gives no factor: shrink all the way.
            h *= if error.is_finite() {
                factor
            } else {
                SHRINK_MOST
            };
            if rejections >= MAX_REJECTIONS || h.abs() < MIN_STEP {
                return Err(Failed {
                    t: self.t0,
                    reason: if rejections >= MAX_REJECTIONS {
                        format!("{rejections} error test failures in a row")
                    } else {
                        format!("the step size fell to {h:e} s")
                    },
                    not_finite: !error.is_finite(),
                });
            }
        };
        let root = if self.g.is_empty() {
            None
        } else {
            sys.indicators(self.t, &self.y, &mut self.g);
            self.find_root(sys)
        };
        Ok(match root {
            Some(tr) => Stepped::Root(tr),
            None if at_stop => Stepped::Stop,
            None => Stepped::Inside,
        })
    }

    /// The states at `t` within the last step, from the continuous extension.
    pub fn interpolate(&self, t: f64, out: &mut [f64]) {
        let (n, h) = (self.y.len(), self.h0);
        let theta = if h == 0.0 { 1.0 } else { (t - self.t0) / h };
        let mut w = [0.0; S];
        for (w, r) in w.iter_mut().zip(&R) {
            *w = h * theta * (r[0] + theta * (r[1] + theta * (r[2] + theta * r[3])));
        }
        for (j, out) in out.iter_mut().enumerate() {
            let mut sum = 0.0;
            for (s, w) in w.iter().enumerate() {
                sum += w * self.k[s * n + j];
            }
            *out = self.y0[j] + sum;
        }
    }

    /// The earliest zero crossing of the indicators inside the last step: a sign change from
    /// `g0` (its start) to `g` (its end), located by the Illinois-modified secant on the dense
    /// output to 100 eps of the time (SUNDIALS' rule, as diffsol had it): the time returned is
    /// the upper end of the last bracket, on the far side of the crossing. An indicator that
    /// ends the step at exactly zero, with no sign change before, is a root at the step's end;
    /// one that starts at zero and leaves it is none (the event was handled where it became
    /// zero).
    fn find_root(&mut self, sys: &mut impl System) -> Option<f64> {
        let (mut t_lo, mut t_hi) = (self.t0, self.t);
        let Some(mut index) = earliest(&self.g0, &self.g) else {
            return self.g.contains(&0.0).then_some(t_hi);
        };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_coefficients_satisfy_the_order_conditions() {
        let b = &A[S - 1];
        for i in 1..S {
            let sum: f64 = A[i][..i].iter().sum();
            assert!((sum - C[i]).abs() < 1e-15, "row {i}: {sum} != c = {}", C[i]);
        }
        // Quadrature conditions up to order 5: sum b_i c_i^q = 1/(q + 1).
        for q in 0..5 {
            let sum: f64 = b.iter().zip(&C).map(|(b, c)| b * c.powi(q)).sum();
            assert!(
                (sum - 1.0 / (q as f64 + 1.0)).abs() < 1e-14,
                "q = {q}: {sum}"
            );
        }
        // The embedded pair has order 4 (error weights sum to zero and integrate up to c^3).
        for q in 0..4 {
            let sum: f64 = E.iter().zip(&C).map(|(e, c)| e * c.powi(q)).sum();
            assert!(sum.abs() < 1e-14, "error weights, q = {q}: {sum}");
        }
        // The continuous extension ends at the solution's weights.
        for (i, r) in R.iter().enumerate() {
            let at_one: f64 = r.iter().sum();
            let b = if i < S - 1 { b[i] } else { 0.0 };
            assert!((at_one - b).abs() < 1e-13, "stage {i}: {at_one} != {b}");
        }
    }

    /// y' = -y + cos t, y(0) = 1, with one indicator y - 0.8.
    struct Decay;
    fn exact(t: f64) -> f64 {
        0.5 * (t.cos() + t.sin()) + 0.5 * (-t).exp()
    }
    impl System for Decay {
        fn derivatives(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
            dy[0] = -y[0] + t.cos();
        }
        fn indicators(&mut self, _t: f64, y: &[f64], g: &mut [f64]) {
            g[0] = y[0] - 0.8;
        }
    }

    #[test]
    fn steps_dense_output_and_roots_follow_the_exact_solution() {
        let mut rk = Tsit5::new(1, 1, 1e-10, 1e-13);
        rk.set(&mut Decay, 0.0, &[1.0], 0.0);
        rk.h = rk.first_step(&mut Decay);
        let mut roots = Vec::new();
        let mut y = [0.0];
        loop {
            match rk.step(&mut Decay, 3.0, 1e-13).unwrap() {
                Stepped::Inside => {}
                Stepped::Stop => break,
                Stepped::Root(t) => roots.push(t),
            }
            assert!((rk.y()[0] - exact(rk.t)).abs() < 1e-9, "t = {}", rk.t);
            let (t0, _) = rk.start();
            let mid = 0.5 * (t0 + rk.t);
            rk.interpolate(mid, &mut y);
            assert!((y[0] - exact(mid)).abs() < 1e-8, "dense output at {mid}");
        }
        assert_eq!(rk.t, 3.0);
        // y falls through 0.8 once, near t = 1.195.
        assert_eq!(roots.len(), 1, "{roots:?}");
        for t in roots {
            // The crossing of the dense output, within the dense output's error (~1e-9 here).
            assert!(
                (exact(t) - 0.8).abs() < 1e-8,
                "root at {t}: y = {}",
                exact(t)
            );
        }
    }
}
