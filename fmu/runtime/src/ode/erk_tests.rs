use super::*;

#[test]
fn the_cube_root_is_good_to_2e_12() {
    // Over the errors a step-size factor is computed for, and beyond.
    for k in 0..=4000 {
        let x = 10f64.powf(-20.0 + k as f64 * 0.0075);
        let exact = libm::cbrt(x);
        assert!((cube_root(x) - exact).abs() <= 2e-12 * exact, "x = {x}");
    }
}

/// Row sums equal the nodes, the solution's weights integrate `c^q` exactly for
/// `q < order`, and the error weights annihilate `c^q` for `q < error_order`.
pub fn check_pair(pair: &Tableau, order: i32, error_order: i32) {
    // Sums of large coefficients of both signs (Verner's reach 200) carry their rounding.
    let slack = |terms: &[f64]| 1e-14 * terms.iter().map(|t| t.abs()).sum::<f64>().max(1.0);
    let s = pair.stages();
    let b = pair.a[s - 1];
    for i in 1..s {
        assert_eq!(pair.a[i].len(), i, "row {i}");
        let sum: f64 = pair.a[i].iter().sum();
        assert!(
            (sum - pair.c[i]).abs() < slack(pair.a[i]),
            "row {i}: {sum} != c = {}",
            pair.c[i]
        );
    }
    for q in 0..order {
        let terms: Vec<f64> = b.iter().zip(pair.c).map(|(b, c)| b * c.powi(q)).collect();
        let sum: f64 = terms.iter().sum();
        let exact = 1.0 / (f64::from(q) + 1.0);
        assert!(
            (sum - exact).abs() < 10.0 * slack(&terms),
            "q = {q}: {sum} != {exact}"
        );
    }
    for q in 0..error_order {
        let terms: Vec<f64> = pair
            .e
            .iter()
            .zip(pair.c)
            .map(|(e, c)| e * c.powi(q))
            .collect();
        let sum: f64 = terms.iter().sum();
        assert!(
            sum.abs() < 10.0 * slack(&terms),
            "error weights, q = {q}: {sum}"
        );
    }
    // The continuous extension's extra stages: rows that sum to their nodes.
    let (c_extra, a_extra) = pair.extra_stages();
    for (a, c) in a_extra.iter().zip(c_extra) {
        let sum: f64 = a.iter().sum();
        assert!((sum - c).abs() < slack(a), "extra stage: {sum} != {c}");
    }
    // A polynomial extension ends at the solution's weights; its extra stages weigh nothing.
    if let Dense::Polynomial { r, .. } = pair.dense {
        for (i, r) in r.iter().enumerate() {
            let at_one: f64 = r.iter().sum();
            let b = b.get(i).copied().unwrap_or(0.0);
            assert!((at_one - b).abs() < slack(r), "stage {i}: {at_one} != {b}");
        }
    }
    let (grow_below, shrink_above) = pair.factor_bounds();
    let factor = |e: f64| SAFETY * e.powf(-0.5 / f64::from(pair.exponent));
    assert!((factor(grow_below) - pair.grow_most).abs() < 1e-12);
    assert!((factor(shrink_above) - pair.shrink_most).abs() < 1e-12);
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

/// Adaptive steps at rtol 1e-10 follow the exact solution within `step_tol`, the dense
/// output within `dense_tol`, and the one crossing is found.
pub fn follows_the_exact_solution(pair: &'static Tableau, step_tol: f64, dense_tol: f64) {
    let mut rk = Erk::new(pair, 1, 1, 1e-10, 1e-13);
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
        assert!((rk.y()[0] - exact(rk.t)).abs() < step_tol, "t = {}", rk.t);
        rk.prepare_dense(&mut Decay);
        let (t0, _) = rk.start();
        let mid = 0.5 * (t0 + rk.t);
        rk.interpolate(mid, &mut y);
        assert!(
            (y[0] - exact(mid)).abs() < dense_tol,
            "dense output at {mid}"
        );
    }
    assert_eq!(rk.t, 3.0);
    // y falls through 0.8 once, near t = 1.195.
    assert_eq!(roots.len(), 1, "{roots:?}");
    for t in roots {
        // The crossing of the dense output, within the dense output's error.
        assert!(
            (exact(t) - 0.8).abs() < dense_tol,
            "root at {t}: y = {}",
            exact(t)
        );
    }
}

/// Fixed steps `h` and `h/2` over [0, 3]: the error at the end falls by about 2^order, the
/// largest dense-output error at mid-step by about 2^(dense_order + 1), or more.
pub fn converges_with_order(pair: &'static Tableau, h: f64, order: f64, dense_order: f64) {
    let run = |h: f64| {
        // A tolerance no step fails: the steps are exactly h.
        let mut rk = Erk::new(pair, 1, 0, 1e6, 1e6);
        rk.set(&mut Decay, 0.0, &[1.0], h);
        let (mut dense, mut y) = (0.0f64, [0.0]);
        for k in 0..(3.0 / h).round() as usize {
            rk.h = h;
            rk.step(&mut Decay, 3.0, 1e-12).unwrap();
            assert!((rk.t - (k + 1) as f64 * h).abs() < 1e-12);
            rk.prepare_dense(&mut Decay);
            let mid = rk.t - 0.5 * h;
            rk.interpolate(mid, &mut y);
            dense = dense.max((y[0] - exact(mid)).abs());
        }
        ((rk.y()[0] - exact(3.0)).abs(), dense)
    };
    let (coarse, fine) = (run(h), run(0.5 * h));
    let observed = (coarse.0 / fine.0).log2();
    // At least the order (a wrong coefficient drops it); Tsit5, tuned for a small leading
    // error term, shows 5.9 at h = 0.3.
    assert!(
        observed > order - 0.4,
        "order {observed}: {coarse:?} {fine:?}"
    );
    let observed = (coarse.1 / fine.1).log2();
    assert!(
        observed > dense_order + 0.4,
        "dense order {observed}: {coarse:?} {fine:?}"
    );
}

/// A step that would end within `near` of the stop ends on it: no sliver of a step after.
#[test]
fn a_step_ending_near_the_stop_ends_on_it() {
    // A tolerance no step fails: the step is the one proposed.
    let mut rk = Erk::new(&crate::ode::tsit5::TSIT5, 1, 0, 1e6, 1e6);
    rk.set(&mut Decay, 0.0, &[1.0], 0.0);
    rk.h = 1.0 - 0.5e-3;
    assert!(matches!(
        rk.step(&mut Decay, 1.0, 1e-3).unwrap(),
        Stepped::Stop
    ));
    assert_eq!(rk.t, 1.0);
}

/// An indicator that starts at zero and moves away has not crossed: no root is reported
/// (y from 0.8 rises first, so y - 0.8 leaves zero upward).
#[test]
fn an_indicator_leaving_zero_has_not_crossed() {
    let mut rk = Erk::new(&crate::ode::tsit5::TSIT5, 1, 1, 1e-10, 1e-13);
    rk.set(&mut Decay, 0.0, &[0.8], 0.0);
    rk.h = rk.first_step(&mut Decay);
    loop {
        match rk.step(&mut Decay, 0.3, 1e-13).unwrap() {
            Stepped::Inside => assert!(rk.y()[0] > 0.8),
            Stepped::Stop => break,
            Stepped::Root(t) => panic!("a root at t = {t}"),
        }
    }
}
