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
//! The tests below check the order conditions of E. Hairer and G. Wanner, "Solving Ordinary
//! Differential Equations II", section IV.7, Table 7.1, and the observed order.

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

/// An LU factorization with partial pivoting, `P A = L U`, L with a unit diagonal below U.
pub struct Lu {
    lu: Matrix,
    pivot: Vec<usize>,
}

impl Lu {
    /// None for a matrix that is singular to working precision.
    pub fn factor(mut m: Matrix) -> Option<Lu> {
        let n = m.n;
        let mut pivot = Vec::with_capacity(n);
        for k in 0..n {
            let p = (k..n)
                .max_by(|a, b| m.get(*a, k).abs().total_cmp(&m.get(*b, k).abs()))
                .unwrap();
            if m.get(p, k) == 0.0 || !m.get(p, k).is_finite() {
                return None;
            }
            pivot.push(p);
            if p != k {
                for j in 0..n {
                    m.a.swap(k * n + j, p * n + j);
                }
            }
            for i in k + 1..n {
                let l = m.get(i, k) / m.get(k, k);
                m.set(i, k, l);
                for j in k + 1..n {
                    m.set(i, j, m.get(i, j) - l * m.get(k, j));
                }
            }
        }
        Some(Lu { lu: m, pivot })
    }

    /// Solves `A x = b` in place.
    pub fn solve(&self, b: &mut [f64]) {
        let (m, n) = (&self.lu, self.lu.n);
        for k in 0..n {
            b.swap(k, self.pivot[k]);
        }
        for i in 0..n {
            b[i] -= (0..i).map(|j| m.get(i, j) * b[j]).sum::<f64>();
        }
        for i in (0..n).rev() {
            b[i] = (b[i] - (i + 1..n).map(|j| m.get(i, j) * b[j]).sum::<f64>()) / m.get(i, i);
        }
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
            JacobianSource::Exact => {
                return p
                    .jacobian(t, x)
                    .expect("the problem provides no Jacobian: choose differences");
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
mod tests {
    use super::*;

    /// Hairer and Wanner's coefficients from KPP's: `Gamma^-1 = diag(1/gamma) - C`,
    /// `alpha = A Gamma`, `b = m^T Gamma`, `b_hat = (m - e)^T Gamma`.
    struct Classical {
        gamma: [[f64; S]; S],
        alpha: [[f64; S]; S],
        b: [f64; S],
        b_hat: [f64; S],
    }

    fn classical() -> Classical {
        // Gamma is lower triangular: forward substitution on Gamma^-1 Gamma = I.
        let inv = |i: usize, j: usize| if i == j { 1.0 / GAMMA } else { -C[i][j] };
        let mut gamma = [[0.0; S]; S];
        for i in 0..S {
            gamma[i] = std::array::from_fn(|j| {
                let sum: f64 = (j..i).map(|k| inv(i, k) * gamma[k][j]).sum();
                (f64::from(u8::from(i == j)) - sum) / inv(i, i)
            });
        }
        let mut alpha = [[0.0; S]; S];
        for i in 0..S {
            for j in 0..S {
                alpha[i][j] = (0..S).map(|k| A[i][k] * gamma[k][j]).sum();
            }
        }
        let row = |w: [f64; S]| -> [f64; S] {
            std::array::from_fn(|j| (0..S).map(|i| w[i] * gamma[i][j]).sum())
        };
        Classical {
            gamma,
            alpha,
            b: row(M),
            b_hat: row(std::array::from_fn(|i| M[i] - E[i])),
        }
    }

    #[test]
    fn rodas3_satisfies_the_order_conditions() {
        let Classical {
            gamma,
            alpha,
            b,
            b_hat,
        } = classical();
        let g = GAMMA;
        // beta_ij = alpha_ij + gamma_ij below the diagonal; beta'_i = sum_j beta_ij.
        let beta = |i: usize, j: usize| {
            if j < i {
                alpha[i][j] + gamma[i][j]
            } else {
                0.0
            }
        };
        let beta1: Vec<f64> = (0..S).map(|i| (0..S).map(|j| beta(i, j)).sum()).collect();
        let a: Vec<f64> = (0..S).map(|i| alpha[i].iter().sum()).collect();
        let close = |x: f64, y: f64, what: &str| assert!((x - y).abs() < 1e-14, "{what}: {x} {y}");
        for (w, order) in [(b, 3), (b_hat, 2)] {
            close(w.iter().sum(), 1.0, "order 1");
            let o2: f64 = (0..S).map(|i| w[i] * beta1[i]).sum();
            close(o2, 0.5 - g, "order 2");
            let o3a: f64 = (0..S).map(|i| w[i] * a[i] * a[i]).sum();
            let o3b: f64 = (0..S)
                .flat_map(|i| (0..S).map(move |k| (i, k)))
                .map(|(i, k)| w[i] * beta(i, k) * beta1[k])
                .sum();
            if order == 3 {
                close(o3a, 1.0 / 3.0, "order 3 (a)");
                close(o3b, 1.0 / 6.0 - g + g * g, "order 3 (b)");
            } else {
                // The embedded solution is of order 2 exactly: its estimate is O(h^3).
                assert!((o3a - 1.0 / 3.0).abs() + (o3b - (1.0 / 6.0 - g + g * g)).abs() > 1e-3);
            }
        }
        for i in 0..S {
            close(a[i], ALPHA[i], "alpha_i");
            close(gamma[i][..=i].iter().sum(), GAMMA_I[i], "gamma_i");
            assert_eq!(
                NEW_F[i],
                i == 0 || A[i] != A[i - 1] || ALPHA[i] != ALPHA[i - 1]
            );
        }
    }

    /// dx/dt = L x with L = V diag(lambda) V^-1, V = [[1, 1], [1, -1]]: exact solution known.
    struct Linear {
        lambda: [f64; 2],
    }

    impl Linear {
        fn matrix(&self) -> [[f64; 2]; 2] {
            let [p, q] = self.lambda;
            [
                [(p + q) / 2.0, (p - q) / 2.0],
                [(p - q) / 2.0, (p + q) / 2.0],
            ]
        }
        fn exact(&self, t: f64, x0: &[f64]) -> Vec<f64> {
            let (u, v) = ((x0[0] + x0[1]) / 2.0, (x0[0] - x0[1]) / 2.0);
            let (u, v) = (
                u * (self.lambda[0] * t).exp(),
                v * (self.lambda[1] * t).exp(),
            );
            vec![u + v, u - v]
        }
    }

    impl Problem for Linear {
        fn rhs(&mut self, _t: f64, x: &[f64]) -> Vec<f64> {
            let l = self.matrix();
            (0..2).map(|i| l[i][0] * x[0] + l[i][1] * x[1]).collect()
        }
        fn jacobian(&mut self, _t: f64, _x: &[f64]) -> Option<Matrix> {
            let l = self.matrix();
            Some(Matrix {
                n: 2,
                a: vec![l[0][0], l[0][1], l[1][0], l[1][1]],
            })
        }
    }

    /// Prothero and Robinson's problem: x' = lambda (x - sin t) + cos t, x(0) = 0, x = sin t:
    /// stiff for lambda << -1, not autonomous.
    struct ProtheroRobinson {
        lambda: f64,
    }

    impl Problem for ProtheroRobinson {
        fn rhs(&mut self, t: f64, x: &[f64]) -> Vec<f64> {
            vec![self.lambda * (x[0] - t.sin()) + t.cos()]
        }
        fn jacobian(&mut self, _t: f64, _x: &[f64]) -> Option<Matrix> {
            Some(Matrix {
                n: 1,
                a: vec![self.lambda],
            })
        }
        fn time_derivative(&mut self, t: f64, _x: &[f64]) -> Option<Vec<f64>> {
            Some(vec![-self.lambda * t.cos() - t.sin()])
        }
    }

    /// The error at t = 1 after `steps` equal steps.
    fn fixed_steps(p: &mut impl Problem, x0: &[f64], steps: usize) -> Vec<f64> {
        let mut r = Rodas3::new(1.0, 1.0, JacobianSource::Exact);
        let h = 1.0 / steps as f64;
        let mut x = x0.to_vec();
        for k in 0..steps {
            x = r.step(p, k as f64 * h, &x, h).0;
        }
        x
    }

    fn exponents(v: &[f64]) -> String {
        v.iter().map(|e| format!("{e:.2e} ")).collect()
    }

    fn observed_orders(errors: &[f64]) -> Vec<f64> {
        errors.windows(2).map(|e| (e[0] / e[1]).log2()).collect()
    }

    #[test]
    fn the_observed_order_is_3_on_a_smooth_problem() {
        let mut p = Linear {
            lambda: [-1.0, -3.0],
        };
        let x0 = [1.0, 0.5];
        let exact = p.exact(1.0, &x0);
        let errors: Vec<f64> = [10, 20, 40, 80]
            .map(|n| (fixed_steps(&mut p, &x0, n)[0] - exact[0]).abs())
            .to_vec();
        let orders = observed_orders(&errors);
        eprintln!("smooth: errors {}, orders {orders:.2?}", exponents(&errors));
        assert!(orders.iter().all(|o| (o - 3.0).abs() < 0.15), "{orders:?}");
    }

    /// A stiff linear system (eigenvalues -1 and -1e6) with steps up to 1e5 times the stiff
    /// time constant: L-stability damps the stiff mode in one step, and the smooth mode is
    /// integrated with order 3.
    #[test]
    fn a_stiff_linear_system_keeps_order_3() {
        let mut p = Linear {
            lambda: [-1.0, -1e6],
        };
        let x0 = [1.0, 0.0];
        let exact = p.exact(1.0, &x0);
        let errors: Vec<f64> = [10, 20, 40, 80]
            .map(|n| {
                let x = fixed_steps(&mut p, &x0, n);
                (x[0] - exact[0]).abs().max((x[1] - exact[1]).abs())
            })
            .to_vec();
        let orders = observed_orders(&errors);
        eprintln!(
            "stiff linear: errors {}, orders {orders:.2?}",
            exponents(&errors)
        );
        assert!(orders.iter().all(|o| (o - 3.0).abs() < 0.2), "{orders:?}");
        // L-stable: R(z) -> 0 as z -> -infinity.
        let mut r = Rodas3::new(1.0, 1.0, JacobianSource::Exact);
        let mut decay = Linear {
            lambda: [-1e15, -1e15],
        };
        let (y, _) = r.step(&mut decay, 0.0, &[1.0, 0.0], 1.0);
        assert!(y[0].abs() < 1e-12, "R(-1e15) = {}", y[0]);
    }

    /// Prothero-Robinson with lambda = -1e6, steps up to 1e5 times the stiff time constant: the
    /// error at t = 1 is O(h / |lambda|), of first order in h (the order reduction of
    /// Rosenbrock methods in the stiff limit) but scaled down by the stiffness; the adaptive
    /// run meets its tolerance in a few dozen steps where an explicit method would need a
    /// million, with any source of the Jacobian.
    #[test]
    fn prothero_robinson_is_solved_accurately_with_large_steps() {
        let mut p = ProtheroRobinson { lambda: -1e6 };
        let steps = [10, 20, 40, 80];
        let errors: Vec<f64> = steps
            .map(|n| (fixed_steps(&mut p, &[0.0], n)[0] - 1f64.sin()).abs())
            .to_vec();
        let orders = observed_orders(&errors);
        eprintln!(
            "Prothero-Robinson: errors {}, orders {orders:.2?}",
            exponents(&errors)
        );
        for (n, e) in steps.iter().zip(&errors) {
            assert!(*e < 1.0 / *n as f64 / 1e6, "{errors:?}");
        }
        assert!(orders.iter().all(|o| (o - 1.0).abs() < 0.2), "{orders:?}");
        for source in [
            JacobianSource::Exact,
            JacobianSource::ForwardDifferences,
            JacobianSource::CentralDifferences,
        ] {
            let mut r = Rodas3::new(1e-8, 1e-10, source);
            let x = r.integrate(&mut p, 0.0, 1.0, vec![0.0], 1e-3);
            let err = (x[0] - 1f64.sin()).abs();
            eprintln!("{source:?}: error {err:.1e}, {:?}", r.stats);
            assert!(err < 1e-7, "{source:?}: {err}");
            assert!(r.stats.steps < 200, "{:?}", r.stats);
            let per_jacobian = match source {
                JacobianSource::Exact => 0,
                JacobianSource::ForwardDifferences => 1,
                JacobianSource::CentralDifferences => 2,
            };
            assert_eq!(r.stats.difference_rhs, per_jacobian * r.stats.jacobians);
        }
    }

    /// The difference Jacobians are the exact one to their truncation and rounding.
    #[test]
    fn difference_jacobians_match_the_exact_one() {
        /// A nonlinear 3-state problem with a Jacobian written by hand.
        struct Nonlinear;
        impl Problem for Nonlinear {
            fn rhs(&mut self, _t: f64, x: &[f64]) -> Vec<f64> {
                vec![x[1] * x[2], -x[0].sin(), x[0] * x[0] - 1e3 * x[2]]
            }
            fn jacobian(&mut self, _t: f64, x: &[f64]) -> Option<Matrix> {
                Some(Matrix {
                    n: 3,
                    a: vec![
                        0.0,
                        x[2],
                        x[1],
                        -x[0].cos(),
                        0.0,
                        0.0,
                        2.0 * x[0],
                        0.0,
                        -1e3,
                    ],
                })
            }
        }
        let x = [0.7, -2.0, 1e-4];
        let exact = Nonlinear.jacobian(0.0, &x).unwrap();
        for (source, tol) in [
            (JacobianSource::ForwardDifferences, 1e-6),
            (JacobianSource::CentralDifferences, 1e-9),
        ] {
            let mut r = Rodas3::new(1.0, 1.0, source);
            let f = Nonlinear.rhs(0.0, &x);
            let j = r.jacobian(&mut Nonlinear, 0.0, &x, &f);
            for (a, b) in j.a.iter().zip(&exact.a) {
                assert!(
                    (a - b).abs() <= tol * b.abs().max(1.0),
                    "{source:?}: {a} {b}"
                );
            }
        }
    }

    #[test]
    fn lu_solves_with_pivoting() {
        // A zero on the diagonal needs the row exchange.
        let m = Matrix {
            n: 3,
            a: vec![0.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.0, 1.0],
        };
        let x = [1.0, -2.0, 0.5];
        let mut b: Vec<f64> = (0..3)
            .map(|i| (0..3).map(|j| m.get(i, j) * x[j]).sum())
            .collect();
        Lu::factor(m).unwrap().solve(&mut b);
        for (a, e) in b.iter().zip(x) {
            assert!((a - e).abs() < 1e-15, "{b:?}");
        }
        assert!(Lu::factor(Matrix {
            n: 2,
            a: vec![1.0, 2.0, 2.0, 4.0]
        })
        .is_none());
    }
}
