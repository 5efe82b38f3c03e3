//! Explicit Runge-Kutta pairs with error control, continuous extension and the location of zero
//! crossings on it, for a handful of states: plain loops over buffers allocated once.
//!
//! Three pairs share this engine ([`Tableau`]):
//! - [`super::tsit5::TSIT5`], Tsitouras' 5(4), for the usual tolerances;
//! - [`super::vern6::VERN6`], Verner's 6(5), for models whose steps are limited by accuracy
//!   rather than by the communication step (eight evaluations a step against six, but a step
//!   goes further);
//! - [`super::dop853::DOP853`], Dormand and Prince's 8(5,3), for tight tolerances, where an
//!   eighth-order step goes several times as far as a fifth-order one for the same error.
//!
//! The step-size control is the one diffsol's Tsit45 had, so that a tolerance means what it meant
//! with diffsol:
//! - error norm: root mean square of `err_i / (atol + rtol |y_i|)`, `y` at the step's start;
//! - a step is accepted when that norm is below 1; the next step is `h * 0.9 * norm^(-1/(q+1))`
//!   with `q` the order of the error estimate, the factor clamped to the pair's bounds (an
//!   integral controller: no memory of earlier errors, so the step size is the whole solver
//!   state carried from one step to the next);
//! - a step fails after 40 rejections in a row, or when a rejection asks for less than 1e-13 s;
//! - the first step of a segment after a mode change is estimated as in Hairer, Norsett and
//!   Wanner, Solving ODEs I, II.4.

use crate::math;

/// An explicit pair: `S` stages, the last the derivative at the step's end (first same as last:
/// its row of `a` is the solution's weights).
pub struct Tableau {
    /// Nodes.
    pub c: &'static [f64],
    /// Row `i` holds `a[i][j]`, `j < i`.
    pub a: &'static [&'static [f64]],
    /// The error estimate's weights.
    pub e: &'static [f64],
    /// A second, lower-order estimate that tempers the first (DOP853's `err5^2 /
    /// sqrt(err5^2 + 0.01 err3^2)`); empty for none.
    pub e_low: &'static [f64],
    /// `q + 1`, with `q` the order of the error estimate.
    pub exponent: i32,
    /// Bounds of the step-size factor.
    pub shrink_most: f64,
    pub grow_most: f64,
    pub dense: Dense,
}

/// The continuous extension of a pair. Both forms may need extra stages after the step's
/// (nodes `c`, rows `a` over all earlier stages), evaluated only for a step with a crossing.
pub enum Dense {
    /// Stage `i` (extra stages included) weighs `r[i][0] θ + r[i][1] θ² + ...` at `t0 + θ h`.
    Polynomial {
        c: &'static [f64],
        a: &'static [&'static [f64]],
        r: &'static [&'static [f64]],
    },
    /// Hairer's form for DOP853: the weights `d` of the four highest coefficients of
    /// `y0 + θ(r1 + (1-θ)(r2 + θ(r3 + (1-θ)(r4 + θ(r5 + (1-θ)(r6 + θ r7))))))`.
    Hairer {
        c: &'static [f64],
        a: &'static [&'static [f64]],
        d: &'static [[f64; 16]; 4],
    },
}

impl Tableau {
    /// Stages of a step.
    fn stages(&self) -> usize {
        self.c.len()
    }

    /// The extra stages of the continuous extension: nodes and rows.
    fn extra_stages(&self) -> (&'static [f64], &'static [&'static [f64]]) {
        match self.dense {
            Dense::Polynomial { c, a, .. } | Dense::Hairer { c, a, .. } => (c, a),
        }
    }

    /// Stages including those of the continuous extension.
    fn all_stages(&self) -> usize {
        self.stages() + self.extra_stages().0.len()
    }

    /// The mean square of the error below which the factor is at its upper bound, and above
    /// which it is at its lower one: `0.9 e^(-1/(2(q+1))) = bound`.
    fn factor_bounds(&self) -> (f64, f64) {
        let power = |x: f64| x.powi(2 * self.exponent);
        (
            power(SAFETY / self.grow_most),
            power(SAFETY / self.shrink_most),
        )
    }
}

/// The step-size factor's safety factor.
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

pub struct Erk {
    pair: &'static Tableau,
    rtol: f64,
    atol: f64,
    /// The mean squares of the error at which the step-size factor reaches its bounds.
    grow_below: f64,
    shrink_above: f64,
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
    /// Stage derivatives of the last step, stage after stage (rows of `n`), then those of the
    /// continuous extension.
    k: Vec<f64>,
    /// The continuous extension's coefficients for the last step (vectors of `n`), once asked
    /// for: those of the powers of θ, or of Hairer's form.
    r: Vec<f64>,
    dense_ready: bool,
    /// The last stage (the derivative at the step's end) weighs nothing in the error estimate
    /// (DOP853): it is evaluated only when something needs it, the next step of the segment or
    /// the continuous extension. A segment usually ends at a communication point, where new
    /// inputs make the derivative be evaluated afresh anyway.
    lazy_end: bool,
    /// The step just taken left the derivative at its end unevaluated (`dy` is stale).
    end_pending: bool,
    /// Scratch: a stage's states, a weighted sum of stages, interpolated states and indicators.
    ys: Vec<f64>,
    acc: Vec<f64>,
    ym: Vec<f64>,
    g_lo: Vec<f64>,
    g_hi: Vec<f64>,
    g_mid: Vec<f64>,
}

impl Erk {
    /// The pair `pair` for `n` states and `m` event indicators; the only allocation.
    pub fn new(pair: &'static Tableau, n: usize, m: usize, rtol: f64, atol: f64) -> Self {
        let (grow_below, shrink_above) = pair.factor_bounds();
        let coefficients = match pair.dense {
            Dense::Polynomial { r, .. } => r[0].len(),
            Dense::Hairer { .. } => 7,
        };
        let last = pair.stages() - 1;
        let weighs = |e: &[f64]| e.get(last).is_some_and(|w| *w != 0.0);
        let lazy_end = !weighs(pair.e) && !weighs(pair.e_low);
        Erk {
            pair,
            rtol,
            atol,
            grow_below,
            shrink_above,
            t: 0.0,
            y: vec![0.0; n],
            dy: vec![0.0; n],
            g: vec![0.0; m],
            h: 0.0,
            t0: 0.0,
            y0: vec![0.0; n],
            g0: vec![0.0; m],
            h0: 0.0,
            k: vec![0.0; pair.all_stages() * n],
            r: vec![0.0; coefficients * n],
            dense_ready: false,
            lazy_end,
            end_pending: false,
            ys: vec![0.0; n],
            acc: vec![0.0; n],
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
        self.end_pending = false;
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
        self.end_pending = false;
    }

    /// Evaluates the derivative at the current state if the last step left it for later.
    fn end_derivative(&mut self, sys: &mut impl System) {
        if self.end_pending {
            let n = self.y.len();
            let last = &mut self.k[(self.pair.stages() - 1) * n..self.pair.stages() * n];
            sys.derivatives(self.t, &self.y, last);
            self.dy.copy_from_slice(last);
            self.end_pending = false;
        }
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

    /// `out[j] = base[j] + scale Σ_s w[s] k[s][j]` (no `base`: 0), stage after stage (rows of
    /// `out.len()`): whole rows at a time, no work for a zero weight, and unrolled in registers
    /// for the usual numbers of states.
    fn weighted(out: &mut [f64], k: &[f64], w: &[f64], base: Option<&[f64]>, scale: f64) {
        match out.len() {
            1 => weighted_n::<1>(out, k, w, base, scale),
            2 => weighted_n::<2>(out, k, w, base, scale),
            3 => weighted_n::<3>(out, k, w, base, scale),
            4 => weighted_n::<4>(out, k, w, base, scale),
            5 => weighted_n::<5>(out, k, w, base, scale),
            6 => weighted_n::<6>(out, k, w, base, scale),
            7 => weighted_n::<7>(out, k, w, base, scale),
            8 => weighted_n::<8>(out, k, w, base, scale),
            _ => {
                out.fill(0.0);
                for (w, ks) in w.iter().zip(k.chunks_exact(out.len())) {
                    if *w != 0.0 {
                        for (o, k) in out.iter_mut().zip(ks) {
                            *o += w * k;
                        }
                    }
                }
                match base {
                    Some(base) => {
                        for (o, b) in out.iter_mut().zip(base) {
                            *o = b + scale * *o;
                        }
                    }
                    None => out.iter_mut().for_each(|o| *o *= scale),
                }
            }
        }
    }

    /// The states `y0 + h Σ_s a[s] k[s]` of a stage, in `ys`.
    fn stage_states(&mut self, a: &[f64], h: f64) {
        Self::weighted(&mut self.ys, &self.k, a, Some(&self.y0), h);
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
            // (0.01 / largest)^(1 / (q + 1))
            math::pow(0.01 / largest, 1.0 / f64::from(self.pair.exponent))
        };
        (100.0 * h0).min(h1)
    }

    /// The stages of a step of length `h` from the step's start, ending at `t1`, for `N` states
    /// ([`weighted_n`]).
    #[inline(always)]
    fn stages<const N: usize>(&mut self, sys: &mut impl System, h: f64, t1: f64) {
        let n = self.y.len();
        let pair = self.pair;
        let last = pair.stages() - 1;
        for i in 1..pair.stages() {
            weighted_n::<N>(&mut self.ys, &self.k, pair.a[i], Some(&self.y0), h);
            if i == last && self.lazy_end {
                break;
            }
            // The stages at the step's end (c = 1) take its end time exactly.
            let t = if pair.c[i] == 1.0 {
                t1
            } else {
                self.t0 + pair.c[i] * h
            };
            sys.derivatives(t, &self.ys, &mut self.k[i * n..(i + 1) * n]);
        }
    }

    /// The error of the step of length `h` just staged, as a mean square (accepted below 1).
    #[inline(always)]
    fn error<const N: usize>(&mut self, h: f64) -> f64 {
        let pair = self.pair;
        weighted_n::<N>(&mut self.acc, &self.k, pair.e, None, h);
        let high = self.mean_square(|j| self.acc[j]);
        if pair.e_low.is_empty() {
            return high;
        }
        // Hairer's DOP853: err = err5^2 / sqrt(err5^2 + 0.01 err3^2), as a root mean square.
        weighted_n::<N>(&mut self.acc, &self.k, pair.e_low, None, h);
        let low = self.mean_square(|j| self.acc[j]);
        let denominator = high + 0.01 * low;
        if denominator > 0.0 {
            high * high / denominator
        } else {
            0.0
        }
    }

    /// The step-size factor for an error `error` (mean square).
    fn factor(&self, error: f64) -> f64 {
        let pair = self.pair;
        // Outside the bounds the power is not needed (a step held short by the communication
        // step has a tiny error: the usual case).
        if error <= self.grow_below {
            pair.grow_most
        } else if error >= self.shrink_above {
            pair.shrink_most
        } else {
            // 0.9 (error^2)^(-1/(2(q+1))): a root of degree 2^k or 3 2^k is square roots after
            // a cube root (DOP853: four square roots; Verner's pair: a cube root and two), any
            // other the power function, eight times as costly.
            let degree = 2 * pair.exponent.unsigned_abs();
            let twos = degree.trailing_zeros();
            let square_roots = |r: f64| (0..twos).fold(r, |r, _| r.sqrt());
            let root = match degree >> twos {
                1 => square_roots(error),
                3 => square_roots(cube_root(error)),
                _ => math::pow(error, 1.0 / f64::from(degree)),
            };
            (SAFETY / root).clamp(pair.shrink_most, pair.grow_most)
        }
    }

    /// One accepted step from the current state with the trial step `h`, ending at `stop` if it
    /// would end within `near` of it or beyond. Leaves the proposal for the next step in `h`.
    pub fn step(&mut self, sys: &mut impl System, stop: f64, near: f64) -> Result<Stepped, Failed> {
        // The stage loops compiled for the usual numbers of states unroll into registers: a
        // third of a small model's step went to looping over two states.
        match self.y.len() {
            1 => self.step_n::<1>(sys, stop, near),
            2 => self.step_n::<2>(sys, stop, near),
            3 => self.step_n::<3>(sys, stop, near),
            4 => self.step_n::<4>(sys, stop, near),
            5 => self.step_n::<5>(sys, stop, near),
            6 => self.step_n::<6>(sys, stop, near),
            7 => self.step_n::<7>(sys, stop, near),
            8 => self.step_n::<8>(sys, stop, near),
            _ => self.step_n::<0>(sys, stop, near),
        }
    }

    /// [`Erk::step`] for `N` states ([`weighted_n`]).
    fn step_n<const N: usize>(
        &mut self,
        sys: &mut impl System,
        stop: f64,
        near: f64,
    ) -> Result<Stepped, Failed> {
        let n = self.y.len();
        let last = (self.pair.stages() - 1) * n;
        self.end_derivative(sys);
        // Remember the start, for the dense output and for stepping again from here.
        self.t0 = self.t;
        copy_n::<N>(&mut self.y0, &self.y);
        copy_few(&mut self.g0, &self.g);
        copy_n::<N>(&mut self.k[..n], &self.dy);
        self.dense_ready = false;
        let mut h = self.h;
        let mut rejections = 0;
        let at_stop = loop {
            let to_stop = self.t0 + h >= stop - near;
            if to_stop {
                h = stop - self.t0;
            }
            let t1 = if to_stop { stop } else { self.t0 + h };
            self.stages::<N>(sys, h, t1);
            // The error is weighted by the states at the step's start (`y`, not yet replaced).
            let error = self.error::<N>(h);
            let factor = self.factor(error);
            if error < 1.0 {
                self.h0 = h;
                self.h = h * factor;
                self.t = t1;
                // The last stage's states are the solution, and its derivative is the next
                // step's first stage.
                copy_n::<N>(&mut self.y, &self.ys);
                if self.lazy_end {
                    self.end_pending = true;
                } else {
                    copy_n::<N>(&mut self.dy, &self.k[last..last + n]);
                }
                break to_stop;
            }
            rejections += 1;
            // A derivative that is not a finite number gives no factor: shrink all the way.
            h *= if error.is_finite() {
                factor
            } else {
                self.pair.shrink_most
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
}

/// [`Erk::weighted`] for `N` states known when compiled (0: any number, found at run time).
#[inline(always)]
fn weighted_n<const N: usize>(
    out: &mut [f64],
    k: &[f64],
    w: &[f64],
    base: Option<&[f64]>,
    scale: f64,
) {
    if N == 0 {
        return Erk::weighted(out, k, w, base, scale);
    }
    // Two stages per turn, each added in turn as a plain loop would: the same sums, bit for
    // bit, with half the loop's overhead. A zero weight costs as much as any (a test for it
    // cost more than the products it saved).
    let mut acc = [0.0; N];
    let pairs = w.len() / 2;
    for (w, ks) in w.chunks_exact(2).zip(k.chunks_exact(2 * N)) {
        let (k0, k1) = ks.split_at(N);
        for i in 0..N {
            acc[i] += w[0] * k0[i];
            acc[i] += w[1] * k1[i];
        }
    }
    if w.len() % 2 == 1 {
        let (w, ks) = (w[2 * pairs], &k[2 * pairs * N..(2 * pairs + 1) * N]);
        for i in 0..N {
            acc[i] += w * ks[i];
        }
    }
    match base {
        Some(base) => {
            for ((o, b), a) in out.iter_mut().zip(base).zip(&acc) {
                *o = b + scale * a;
            }
        }
        None => {
            for (o, a) in out.iter_mut().zip(&acc) {
                *o = scale * a;
            }
        }
    }
}

/// `x^(1/3)` for a positive normal `x`, within 2e-12 of it: a first guess from a third of the
/// bits, good to 3 %, then three Newton steps. Only a step-size factor rests on it, for which
/// libm's correctly rounded root cost a hundred instructions more.
fn cube_root(x: f64) -> f64 {
    let mut y = f64::from_bits(x.to_bits() / 3 + 0x2A9F_7893_782D_A1CE);
    for _ in 0..3 {
        y -= (y - x / (y * y)) / 3.0;
    }
    y
}

/// `dst = src`, `N` values known when compiled (0: any number): a few moves, not a call.
#[inline(always)]
fn copy_n<const N: usize>(dst: &mut [f64], src: &[f64]) {
    if N == 0 {
        dst.copy_from_slice(src)
    } else {
        dst[..N].copy_from_slice(&src[..N])
    }
}

/// `dst = src` for the event indicators: usually one or two.
#[inline(always)]
fn copy_few(dst: &mut [f64], src: &[f64]) {
    match src.len() {
        0 => {}
        1 => dst[0] = src[0],
        2 => dst[..2].copy_from_slice(&src[..2]),
        _ => dst.copy_from_slice(src),
    }
}

#[path = "erk_dense.rs"]
mod dense;

#[cfg(test)]
#[path = "erk_tests.rs"]
pub(crate) mod tests;
