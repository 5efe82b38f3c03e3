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
            JacobianSource::Exact | JacobianSource::Flipped(..) => 0,
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
