//! A small explicit integrator for the test importers, independent of the FMUs' own, and the
//! step-size rule their importers share.

/// One Dormand-Prince 5(4) step of dx/dt = rhs(t, x): the fifth-order solution and the error
/// norm (root mean square, relative to `rtol` times the larger of |x| and |y|, plus `rtol` 1e-3
/// absolute), for the test importers' Model Exchange integrators.
pub fn dormand_prince(
    rhs: impl Fn(f64, &[f64]) -> Vec<f64>,
    t: f64,
    x: &[f64],
    h: f64,
    rtol: f64,
) -> (Vec<f64>, f64) {
    const C: [f64; 6] = [1.0 / 5.0, 3.0 / 10.0, 4.0 / 5.0, 8.0 / 9.0, 1.0, 1.0];
    const A: [&[f64]; 6] = [
        &[1.0 / 5.0],
        &[3.0 / 40.0, 9.0 / 40.0],
        &[44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0],
        &[
            19372.0 / 6561.0,
            -25360.0 / 2187.0,
            64448.0 / 6561.0,
            -212.0 / 729.0,
        ],
        &[
            9017.0 / 3168.0,
            -355.0 / 33.0,
            46732.0 / 5247.0,
            49.0 / 176.0,
            -5103.0 / 18656.0,
        ],
        &[
            35.0 / 384.0,
            0.0,
            500.0 / 1113.0,
            125.0 / 192.0,
            -2187.0 / 6784.0,
            11.0 / 84.0,
        ],
    ];
    const E: [f64; 7] = [
        71.0 / 57600.0,
        0.0,
        -71.0 / 16695.0,
        71.0 / 1920.0,
        -17253.0 / 339200.0,
        22.0 / 525.0,
        -1.0 / 40.0,
    ];
    let mut k = vec![rhs(t, x)];
    for (c, a) in C.iter().zip(A) {
        let y: Vec<f64> = (0..x.len())
            .map(|i| x[i] + h * a.iter().zip(&k).map(|(a, k)| a * k[i]).sum::<f64>())
            .collect();
        k.push(rhs(t + c * h, &y));
    }
    let y: Vec<f64> = (0..x.len())
        .map(|i| x[i] + h * A[5].iter().zip(&k).map(|(a, k)| a * k[i]).sum::<f64>())
        .collect();
    let err = (0..x.len())
        .map(|i| {
            let e = h * E.iter().zip(&k).map(|(e, k)| e * k[i]).sum::<f64>();
            let scale = rtol * x[i].abs().max(y[i].abs()) + rtol * 1e-3;
            (e / scale).powi(2)
        })
        .sum::<f64>();
    (y, (err / x.len().max(1) as f64).sqrt())
}

/// The factor of the next step size after a step whose error estimate, O(h^order), has the
/// norm `err` (accepted up to 1): 0.9 err^(-1/order), within [0.2, 5].
pub fn next_step_factor(err: f64, order: i32) -> f64 {
    (0.9 * err.max(1e-10).powf(-1.0 / f64::from(order))).clamp(0.2, 5.0)
}
