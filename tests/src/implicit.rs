//! A linearly implicit integrator for the test importers, independent of the FMUs' own:
//! Rodas3, a Rosenbrock method of order 3 with an embedded solution of order 2, four stages
//! and three right-hand sides a step, L-stable and stiffly accurate. Its Jacobian comes from
//! the problem (an FMU's directional derivatives) or from differences of the right-hand side;
//! every evaluation is counted, so that the two can be compared.
//!
//! Coefficients: G. Steinebach's RODAS3, as tabulated by A. Sandu, J. G. Verwer et al.,
//! "Benchmarking stiff ODE solvers for atmospheric chemistry problems II: Rosenbrock solvers",
//! Atmospheric Environment 31 (1997) 3459-3472, in the form of their KPP integrator:
//!
//! ```text
//! W = I / (h gamma) - J(t, x)
//! W K_i = f(t + alpha_i h, x + sum_j a_ij K_j) + sum_j c_ij / h K_j + h gamma_i df/dt
//! x1 = x + sum_i m_i K_i,   error = sum_i e_i K_i
//! ```
//!
//! The tests (implicit/tests.rs) check the order conditions of E. Hairer and G. Wanner,
//! "Solving Ordinary Differential Equations II", section IV.7, Table 7.1, and the observed
//! order.

/// A square matrix, row by row.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    pub n: usize,
    pub a: Vec<f64>,
}

impl Matrix {
    pub fn zeros(n: usize) -> Matrix {
        Matrix {
            n,
            a: vec![0.0; n * n],
        }
    }

    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.a[i * self.n + j]
    }

    pub fn set(&mut self, i: usize, j: usize, v: f64) {
        self.a[i * self.n + j] = v;
    }

    /// Sets column `j` from a vector.
    pub fn set_column(&mut self, j: usize, column: &[f64]) {
        for (i, v) in column.iter().enumerate() {
            self.set(i, j, *v);
        }
    }
}

/// An LU factorization with partial pivoting, nalgebra's.
pub struct Lu(nalgebra::LU<f64, nalgebra::Dyn, nalgebra::Dyn>);

impl Lu {
    /// None for a matrix that is singular to working precision (a pivot 0 or not finite).
    pub fn factor(m: Matrix) -> Option<Lu> {
        let lu = nalgebra::DMatrix::from_row_slice(m.n, m.n, &m.a).lu();
        let u = lu.u();
        (0..m.n)
            .all(|i| u[(i, i)] != 0.0 && u[(i, i)].is_finite())
            .then_some(Lu(lu))
    }

    /// Solves `A x = b` in place.
    pub fn solve(&self, b: &mut [f64]) {
        let mut x = nalgebra::DVector::from_column_slice(b);
        self.0.solve_mut(&mut x);
        b.copy_from_slice(x.as_slice());
    }
}

/// dx/dt = f(t, x), with what it knows of its own derivatives.
pub trait Problem {
    fn rhs(&mut self, t: f64, x: &[f64]) -> Vec<f64>;

    /// The exact Jacobian df/dx, where the problem has one.
    fn jacobian(&mut self, _t: f64, _x: &[f64]) -> Option<Matrix> {
        None
    }

    /// df/dt at constant x; None: the problem is autonomous (df/dt = 0).
    fn time_derivative(&mut self, _t: f64, _x: &[f64]) -> Option<Vec<f64>> {
        None
    }
}

/// Where the integrator takes df/dx from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JacobianSource {
    /// [`Problem::jacobian`].
    Exact,
    /// One right-hand side per state, forward differences.
    ForwardDifferences,
    /// Two right-hand sides per state, central differences.
    CentralDifferences,
    /// [`Problem::jacobian`] with the sign of entry (row, column) flipped: a wrong Jacobian,
    /// which the tests' bounds must see.
    Flipped(usize, usize),
}

/// What the integration cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Steps attempted, accepted or not (bisection steps included).
    pub steps: usize,
    /// Right-hand sides for the stages.
    pub rhs: usize,
    /// Jacobians, from either source.
    pub jacobians: usize,
    /// Right-hand sides spent on difference Jacobians.
    pub difference_rhs: usize,
    /// LU factorizations of `I / (h gamma) - J`.
    pub factorizations: usize,
}

/// The stages' coefficients (see the module's documentation).
const S: usize = 4;
const GAMMA: f64 = 0.5;
const A: [[f64; S]; S] = [
    [0.0; S],
    [0.0, 0.0, 0.0, 0.0],
    [2.0, 0.0, 0.0, 0.0],
    [2.0, 0.0, 1.0, 0.0],
];
const C: [[f64; S]; S] = [
    [0.0; S],
    [4.0, 0.0, 0.0, 0.0],
    [1.0, -1.0, 0.0, 0.0],
    [1.0, -1.0, -8.0 / 3.0, 0.0],
];
const M: [f64; S] = [2.0, 0.0, 1.0, 1.0];
const E: [f64; S] = [0.0, 0.0, 0.0, 1.0];
/// The stages' times, `sum_j alpha_ij`.
const ALPHA: [f64; S] = [0.0, 0.0, 1.0, 1.0];
/// The stages' factors of df/dt, `sum_j gamma_ij`.
const GAMMA_I: [f64; S] = [0.5, 1.5, 0.0, 0.0];
/// Stage 2 is evaluated where stage 1 is (a21 = 0, alpha2 = 0): its f is stage 1's.
const NEW_F: [bool; S] = [true, false, true, true];

/// The error estimate is O(h^ERROR_ORDER): the step size scales as err^(-1 / ERROR_ORDER).
pub const ERROR_ORDER: i32 = 3;

/// f, df/dx and df/dt at the start of a step: kept for every step from that point (rejected
/// steps, the bisection of an event).
struct Linearization {
    t: f64,
    x: Vec<f64>,
    f: Vec<f64>,
    jacobian: Matrix,
    dfdt: Option<Vec<f64>>,
}

/// The Rodas3 integrator: one step at a time, the caller controls the step size (see
/// [`Rodas3::integrate`] for the plain controller).
pub struct Rodas3 {
    pub rtol: f64,
    pub atol: f64,
    pub source: JacobianSource,
    pub stats: Stats,
    at: Option<Linearization>,
}

impl Rodas3 {
    pub fn new(rtol: f64, atol: f64, source: JacobianSource) -> Rodas3 {
        Rodas3 {
            rtol,
            atol,
            source,
            stats: Stats::default(),
            at: None,
        }
    }

    /// Forgets the linearization: the problem changed at the same (t, x) (an event).
    pub fn restart(&mut self) {
        self.at = None;
    }

    fn rhs(&mut self, p: &mut impl Problem, t: f64, x: &[f64]) -> Vec<f64> {
        self.stats.rhs += 1;
        p.rhs(t, x)
    }

    fn jacobian(&mut self, p: &mut impl Problem, t: f64, x: &[f64], f: &[f64]) -> Matrix {
        self.stats.jacobians += 1;
        let n = x.len();
        let eps = f64::EPSILON;
        // x moved by about d in state j: the moved states and the increment as represented.
        let moved = |j: usize, d: f64| {
            let mut y = x.to_vec();
            y[j] += d;
            let d = y[j] - x[j];
            (y, d)
        };
        let mut jac = Matrix::zeros(n);
        match self.source {
            JacobianSource::Exact | JacobianSource::Flipped(..) => {
                let mut jac = p
                    .jacobian(t, x)
                    .expect("the problem provides no Jacobian: choose differences");
                if let JacobianSource::Flipped(i, j) = self.source {
                    jac.set(i, j, -jac.get(i, j));
                }
                return jac;
            }
            JacobianSource::ForwardDifferences => {
                for (j, xj) in x.iter().enumerate() {
                    // The increment of Hairer and Wanner's RADAU5: sqrt(eps max(1e-5, x^2)).
                    let (y, d) = moved(j, (eps * xj.powi(2).max(1e-5)).sqrt());
                    let column: Vec<f64> = p
                        .rhs(t, &y)
                        .iter()
                        .zip(f)
                        .map(|(a, b)| (a - b) / d)
                        .collect();
                    jac.set_column(j, &column);
                }
                self.stats.difference_rhs += n;
            }
            JacobianSource::CentralDifferences => {
                for (j, xj) in x.iter().enumerate() {
                    // Truncation d^2 against rounding eps / d: d ~ eps^(1/3).
                    let d = eps.cbrt() * xj.abs().max(1e-2);
                    let ((up, du), (down, dd)) = (moved(j, d), moved(j, -d));
                    let (up, down) = (p.rhs(t, &up), p.rhs(t, &down));
                    let column: Vec<f64> = up
                        .iter()
                        .zip(&down)
                        .map(|(a, b)| (a - b) / (du - dd))
                        .collect();
                    jac.set_column(j, &column);
                }
                self.stats.difference_rhs += 2 * n;
            }
        }
        jac
    }

    /// The linearization at (t, x), computed unless it is the one kept.
    fn linearize(&mut self, p: &mut impl Problem, t: f64, x: &[f64]) -> Linearization {
        match self.at.take() {
            Some(at) if at.t == t && at.x == x => at,
            _ => {
                let f = self.rhs(p, t, x);
                let jacobian = self.jacobian(p, t, x, &f);
                Linearization {
                    t,
                    x: x.to_vec(),
                    f,
                    jacobian,
                    dfdt: p.time_derivative(t, x),
                }
            }
        }
    }

    /// One step of size `h` from (t, x): the new states and the error norm (root mean square
    /// of the estimate over `atol + rtol max(|x|, |x1|)`; a step with a norm up to 1 is
    /// accepted). A singular iteration matrix gives an infinite norm: a smaller step.
    pub fn step(&mut self, p: &mut impl Problem, t: f64, x: &[f64], h: f64) -> (Vec<f64>, f64) {
        let at = self.linearize(p, t, x);
        let n = x.len();
        self.stats.steps += 1;
        let mut w = at.jacobian.clone();
        for v in w.a.iter_mut() {
            *v = -*v;
        }
        for i in 0..n {
            w.set(i, i, w.get(i, i) + 1.0 / (h * GAMMA));
        }
        self.stats.factorizations += 1;
        let Some(lu) = Lu::factor(w) else {
            self.at = Some(at);
            return (x.to_vec(), f64::INFINITY);
        };
        let mut k: Vec<Vec<f64>> = Vec::with_capacity(S);
        let mut f = at.f.clone();
        for i in 0..S {
            if i > 0 && NEW_F[i] {
                let y: Vec<f64> = (0..n)
                    .map(|l| x[l] + (0..i).map(|j| A[i][j] * k[j][l]).sum::<f64>())
                    .collect();
                f = self.rhs(p, t + ALPHA[i] * h, &y);
            }
            let mut b: Vec<f64> = (0..n)
                .map(|l| f[l] + (0..i).map(|j| C[i][j] / h * k[j][l]).sum::<f64>())
                .collect();
            if let Some(dfdt) = &at.dfdt {
                for (b, d) in b.iter_mut().zip(dfdt) {
                    *b += h * GAMMA_I[i] * d;
                }
            }
            lu.solve(&mut b);
            k.push(b);
        }
        let y: Vec<f64> = (0..n)
            .map(|l| x[l] + (0..S).map(|i| M[i] * k[i][l]).sum::<f64>())
            .collect();
        let err = (0..n)
            .map(|l| {
                let e = (0..S).map(|i| E[i] * k[i][l]).sum::<f64>();
                let scale = self.atol + self.rtol * x[l].abs().max(y[l].abs());
                (e / scale).powi(2)
            })
            .sum::<f64>();
        self.at = Some(at);
        let err = (err / n.max(1) as f64).sqrt();
        (y, if err.is_nan() { f64::INFINITY } else { err })
    }

    /// Integrates from `t0` to `t1` starting with step `h`, with the usual controller:
    /// `h err^(-1/3)` with a safety factor 0.9, at most 5 times larger, at least 5 times smaller.
    pub fn integrate(
        &mut self,
        p: &mut impl Problem,
        t0: f64,
        t1: f64,
        mut x: Vec<f64>,
        mut h: f64,
    ) -> Vec<f64> {
        let mut t = t0;
        while t < t1 {
            let dt = h.min(t1 - t);
            let (y, err) = self.step(p, t, &x, dt);
            h = dt * crate::ode::next_step_factor(err, ERROR_ORDER);
            if err <= 1.0 {
                t = if dt == t1 - t { t1 } else { t + dt };
                x = y;
            }
        }
        x
    }
}

#[cfg(test)]
mod tests;
