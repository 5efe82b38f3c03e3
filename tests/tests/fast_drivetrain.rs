//! FastDrivetrain through the C ABI, against a complete n-shaft model written here shaft by
//! shaft (Newton-Euler per shaft, Lagrange's equation summed shaft by shaft), not from the
//! FMU's four sums: the reduction's identities for random shaft sets, kinetic energy and
//! angular momentum of discs vs shafts, trajectories and casing moments, limit cases, the
//! energy balance with shifts, the shift rule, and the refusals.

use fmu_harness::{Fmu, Instance, ERROR, OK};

const H: f64 = 1e-3;
const MODEL: &str = "FastDrivetrain";

// The reference model is in its own file; the tests against it are here.
#[path = "fast_drivetrain/model.rs"]
mod model;

use model::{add, cross, dot, inertia, scale, Rng, Shaft, Train, V3};

/// The FMU's moment on the casing plus the rigid part it leaves to the host, J_eff =
/// diag(alpha, J_pitch, alpha) read from the FMU: the total moment of the shafts.
fn fmu_total_moment(inst: &Instance, omega: V3, domega: V3) -> V3 {
    let (alpha, pitch) = (inst.real("alpha"), inst.real("J_pitch"));
    let j = |w: V3| [alpha * w[0], pitch * w[1], alpha * w[2]];
    let m = [inst.real("M_x"), inst.real("M_y"), inst.real("M_z")];
    add(m, scale(-1.0, add(j(domega), cross(omega, j(omega)))))
}

fn set_inputs(inst: &Instance, tau_eng: f64, tau_ext: f64, omega: V3) {
    for (name, v) in [
        ("tau_eng", tau_eng),
        ("tau_ext", tau_ext),
        ("omega_x", omega[0]),
        ("omega_y", omega[1]),
        ("omega_z", omega[2]),
    ] {
        assert_eq!(inst.set(name, v), OK);
    }
}

#[test]
fn the_discs_reproduce_the_shafts_in_energy_and_angular_momentum() {
    let fmu = Fmu::load(MODEL);
    let mut rng = Rng(0x9e3779b97f4a7c15);
    for case in 0..40 {
        let n = 2 + case % 7;
        let train = Train::random(&mut rng, n, 3);
        let inst = train.start(&fmu, 1e-8, 1 + (case % 3) as i32, &[]);
        let g = case % 3;
        let r = |name| inst.real(name);
        let (alpha, beta) = (r("alpha"), r("beta"));
        let (jxx_a, jxx_b, jyy_a, jyy_b, rho_e) =
            (r("Jxx_a"), r("Jxx_b"), r("Jyy_a"), r("Jyy_b"), r("rho_e"));
        let sum = |f: fn(&Shaft, f64) -> f64| -> f64 {
            train
                .shafts
                .iter()
                .zip(&train.ratios[g])
                .map(|(s, r)| f(s, *r))
                .sum()
        };
        let (a, b) = (sum(|s, _| s.jxx), sum(|s, _| s.jyy));
        let (c, d) = (sum(|s, r| r * s.jyy), sum(|s, r| r * r * s.jyy));
        let close = |x: f64, y: f64, what: &str| {
            assert!(
                (x - y).abs() <= 1e-13 * y.abs().max(1e-3),
                "case {case} {what}: {x} vs {y}"
            );
        };
        close(jxx_a + jxx_b, a, "Jxx_a + Jxx_b = alpha");
        close(alpha, a, "alpha");
        close(jyy_a + jyy_b, b, "Jyy_a + Jyy_b = beta");
        close(beta, b, "beta");
        close(rho_e * (jyy_a - jyy_b), c, "rho_e (Jyy_a - Jyy_b) = gamma");
        close(rho_e * rho_e * beta, d, "rho_e^2 beta = delta");
        close(r("J_pitch"), b - c * c / d, "J_pitch");
        // Both discs are valid inertia tensors of solids of revolution.
        for (jx, jy) in [(jxx_a, jyy_a), (jxx_b, jyy_b)] {
            assert!(
                jy > 0.0 && jx > 0.0 && jy <= 2.0 * jx * (1.0 + 1e-12),
                "case {case}: disc {jx} {jy}"
            );
        }
        // Kinetic energy and angular momentum, casing translation and rotation included, for
        // random casing twists and spins: shafts at their places vs two discs of mass m_disc at
        // the shafts' centre with dJ added to the casing.
        let (m_disc, hx, hz) = (r("m_disc"), r("hx_disc"), r("hz_disc"));
        let (dxx, dyy, dzz, dxz) = (r("dJ_xx"), r("dJ_yy"), r("dJ_zz"), r("dJ_xz"));
        for _ in 0..5 {
            let v = [
                rng.uniform(-20.0, 20.0),
                rng.uniform(-2.0, 2.0),
                rng.uniform(-5.0, 5.0),
            ];
            let omega = [
                rng.uniform(-2.0, 2.0),
                rng.uniform(-1.0, 1.0),
                rng.uniform(-2.0, 2.0),
            ];
            let w = rng.uniform(-600.0, 600.0);
            let (e_full, h_full) = train.energy_momentum(g, v, omega, w);
            let h = [hx, 0.0, hz];
            let vel = add(v, cross(omega, h));
            let dj = [
                dxx * omega[0] + dxz * omega[2],
                dyy * omega[1],
                dxz * omega[0] + dzz * omega[2],
            ];
            let disc_a = inertia(jxx_a, jyy_a, add(omega, [0.0, rho_e * w, 0.0]));
            let disc_b = inertia(jxx_b, jyy_b, add(omega, [0.0, -rho_e * w, 0.0]));
            let e_fast = m_disc * dot(vel, vel)
                + 0.5 * dot(omega, dj)
                + 0.5 * dot(add(omega, [0.0, rho_e * w, 0.0]), disc_a)
                + 0.5 * dot(add(omega, [0.0, -rho_e * w, 0.0]), disc_b);
            let h_fast = add(
                add(scale(2.0 * m_disc, cross(h, vel)), dj),
                add(disc_a, disc_b),
            );
            assert!(
                (e_fast - e_full).abs() <= 1e-12 * e_full,
                "case {case}: T {e_fast} vs {e_full}"
            );
            let size = dot(h_full, h_full).sqrt();
            for i in 0..3 {
                assert!(
                    (h_fast[i] - h_full[i]).abs() <= 1e-12 * size,
                    "case {case}: H {h_fast:?} vs {h_full:?}"
                );
            }
        }
    }
}

/// The casing's motion in the trajectory tests: rolling into a corner while yawing and pitching.
fn casing(t: f64) -> V3 {
    [
        0.8 * (1.3 * t).sin(),
        0.15 * (2.0 * t).sin() + 0.05,
        0.4 * (0.9 * t).cos(),
    ]
}

#[test]
fn trajectories_and_casing_moments_equal_the_complete_models() {
    // The complete model integrated here (RK4, 200 substeps per step) in velocity form, with
    // the casing's angular velocity linear over each step (the FMU gets its input derivatives),
    // and a shift up and down, applied as the plastic re-engagement solved by least squares.
    let fmu = Fmu::load(MODEL);
    let train = Train::default_twin();
    let d_spin = 0.002;
    let inst = train.start(&fmu, 1e-11, 1, &[("d_spin", d_spin), ("w_ds_start", 20.0)]);
    let omega_vrs = [fmu.vr("omega_x"), fmu.vr("omega_y"), fmu.vr("omega_z")];
    let shifts = [(400, 2), (700, 3), (900, 2)];
    // The FMU started with omega_y = 0 and w_ds = 20; the twin too.
    let (mut theta, mut w) = (0.0, 20.0);
    let mut gear = 0usize;
    let (mut worst_w, mut worst_m) = (0.0f64, 0.0f64);
    let mut m_scale = 0.0f64;
    for k in 0..1200 {
        let t = k as f64 * H;
        let (w0, w1) = (casing(t), casing(t + H));
        let slope = scale(1.0 / H, add(w1, scale(-1.0, w0)));
        let tau_eng = 10.0 + 5.0 * (3.0 * t).sin();
        let tau_ext = -30.0 + 10.0 * t.cos();
        if let Some(&(_, g)) = shifts.iter().find(|(s, _)| *s == k) {
            // Each shaft keeps Omega_k; the new sprocket speed fits them best in Jyy-weighted
            // least squares: sum Jyy rho' (Omega - omega_y - rho' w') = 0.
            let (mut num, mut den) = (0.0, 0.0);
            for ((s, r), r_new) in train
                .shafts
                .iter()
                .zip(&train.ratios[gear])
                .zip(&train.ratios[g - 1])
            {
                num += s.jyy * r_new * (r * w);
                den += s.jyy * r_new * r_new;
            }
            w = num / den;
            gear = g - 1;
            assert_eq!(inst.set_int("gear", g as i32), OK);
        }
        if k == 0 {
            // The twin's momentum is kept through the casing's omega_y jump at t = 0 too.
            let p = train.momentum(gear, 0.0, w);
            w = train.speed(gear, w0[1], p);
        }
        set_inputs(&inst, tau_eng, tau_ext, w0);
        assert_eq!(
            inst.set_input_derivatives(&omega_vrs, &[1, 1, 1], &slope),
            OK
        );
        assert_eq!(inst.do_step(t, H), OK, "{}", inst.log_text());
        let rho_eng = train.ratios[gear][train.crank];
        let f = |x: [f64; 2]| {
            let q = rho_eng * tau_eng + tau_ext - d_spin * x[1];
            [x[1], train.acceleration(gear, slope[1], q)]
        };
        let sub = 200;
        let dt = H / sub as f64;
        for _ in 0..sub {
            let x = [theta, w];
            let k1 = f(x);
            let k2 = f([x[0] + 0.5 * dt * k1[0], x[1] + 0.5 * dt * k1[1]]);
            let k3 = f([x[0] + 0.5 * dt * k2[0], x[1] + 0.5 * dt * k2[1]]);
            let k4 = f([x[0] + dt * k3[0], x[1] + dt * k3[1]]);
            theta += dt / 6.0 * (k1[0] + 2.0 * k2[0] + 2.0 * k3[0] + k4[0]);
            w += dt / 6.0 * (k1[1] + 2.0 * k2[1] + 2.0 * k3[1] + k4[1]);
        }
        worst_w = worst_w.max((inst.real("w_ds") - w).abs() / w.abs().max(1.0));
        assert!(
            (inst.real("theta_ds") - theta).abs() < 1e-9 * theta.abs().max(1.0),
            "t = {}: theta {} vs {theta}",
            t + H,
            inst.real("theta_ds")
        );
        assert!((inst.real("w_eng") - rho_eng * w).abs() < 1e-9 * (rho_eng * w).abs().max(1.0));
        let q = rho_eng * tau_eng + tau_ext - d_spin * w;
        let dw = train.acceleration(gear, slope[1], q);
        let full = train.casing_moment(gear, w1, slope, w, dw, tau_ext);
        let fmu_full = fmu_total_moment(&inst, w1, slope);
        let size = dot(full, full).sqrt();
        m_scale = m_scale.max(size);
        for i in 0..3 {
            worst_m = worst_m.max((fmu_full[i] - full[i]).abs() / size.max(1.0));
        }
    }
    assert!(
        worst_w < 1e-9,
        "sprocket speed off the complete model by {worst_w:e}"
    );
    assert!(
        worst_m < 1e-9,
        "casing moment off the complete model by {worst_m:e} of {m_scale}"
    );
    assert_eq!(inst.int("shift_count"), 3);
}

#[test]
fn one_shaft_is_one_disc_and_a_spinning_top() {
    let fmu = Fmu::load(MODEL);
    let train = Train {
        shafts: vec![Shaft {
            m: 3.0,
            jxx: 0.02,
            jyy: 0.01,
            hx: 0.1,
            hz: -0.05,
        }],
        ratios: vec![vec![1.0]],
        crank: 0,
        sprocket: 0,
    };
    let omega = [0.3, 0.2, -0.7];
    let inputs = [
        ("omega_x", 0.3),
        ("omega_y", 0.2),
        ("omega_z", -0.7),
        ("tau_eng", 2.0),
        ("tau_ext", -0.5),
    ];
    let inst = train.start(
        &fmu,
        1e-10,
        1,
        &[&[("w_ds_start", 150.0)][..], &inputs[..]].concat(),
    );
    for k in 0..100 {
        assert_eq!(inst.do_step(k as f64 * H, H), OK);
    }
    assert_eq!(inst.real("Jyy_a"), 0.01);
    assert_eq!(inst.real("Jyy_b"), 0.0);
    assert_eq!(inst.real("J_pitch"), 0.0);
    assert_eq!(inst.real("rho_e"), 1.0);
    // A rotor of spin inertia J turning at Omega_y = omega_y + w about y, in a casing turning at
    // omega: the casing feels -omega x (J Omega_y e_y) from the spin (x: J Omega_y omega_z,
    // z: -J Omega_y omega_x) and the reactions of the engine and the rotor's acceleration:
    // about y the rotor takes tau_eng + tau_ext, so the casing feels -tau_eng.
    let w = inst.real("w_ds");
    assert!((w - (150.0 + 1.5 / 0.01 * 0.1)).abs() < 1e-9 * w, "w = {w}");
    let spin = 0.01 * (omega[1] + w);
    assert!((inst.real("M_x") - spin * omega[2]).abs() < 1e-12 * spin);
    assert!((inst.real("M_z") + spin * omega[0]).abs() < 1e-12 * spin);
    assert!((inst.real("M_y") + 2.0).abs() < 1e-12);
}

#[test]
fn two_equal_shafts_turning_against_each_other_cancel_the_gyroscopic_moment() {
    let fmu = Fmu::load(MODEL);
    let shaft = Shaft {
        m: 2.0,
        jxx: 0.01,
        jyy: 0.004,
        hx: 0.0,
        hz: 0.0,
    };
    let train = Train {
        shafts: vec![shaft, Shaft { hx: 0.1, ..shaft }],
        ratios: vec![vec![1.0, -1.0]],
        crank: 1,
        sprocket: 0,
    };
    let inst = train.start(&fmu, 1e-10, 1, &[("w_ds_start", 300.0)]);
    set_inputs(&inst, 1.0, 0.0, [0.9, 0.4, -1.1]);
    assert_eq!(inst.real("gamma"), 0.0);
    assert_eq!(inst.real("Jyy_a"), inst.real("Jyy_b"));
    for k in 0..200 {
        assert_eq!(inst.do_step(k as f64 * H, H), OK);
        assert!(inst.real("w_ds").abs() > 250.0);
        assert_eq!(inst.real("M_x"), 0.0);
        assert_eq!(inst.real("M_z"), 0.0);
    }
}

#[test]
fn a_free_spin_in_a_steadily_turning_casing_keeps_its_speed_and_the_moment_does_no_work() {
    let fmu = Fmu::load(MODEL);
    let train = Train::default_twin();
    let omega = [0.5, -0.3, 0.8];
    let inst = train.start(&fmu, 1e-8, 3, &[("w_ds_start", 250.0)]);
    set_inputs(&inst, 0.0, 0.0, omega);
    let (w0, p0) = (inst.real("w_ds"), inst.real("p"));
    for k in 0..500 {
        assert_eq!(inst.do_step(k as f64 * H, H), OK);
        assert_eq!(inst.real("w_ds"), w0);
        assert_eq!(inst.real("p"), p0);
        let m = fmu_total_moment(&inst, omega, [0.0; 3]);
        let size = dot(m, m).sqrt();
        assert!(size > 1.0, "a gyroscopic moment is expected: {m:?}");
        assert!(
            dot(m, omega).abs() < 1e-12 * size,
            "M.omega = {}",
            dot(m, omega)
        );
    }
    assert!((inst.real("theta_ds") - 0.5 * w0).abs() < 1e-9 * w0);
}

#[test]
fn drag_spins_down_exponentially_and_its_energy_is_counted() {
    let fmu = Fmu::load(MODEL);
    let train = Train::default_twin();
    let d = 0.05;
    let inst = train.start(&fmu, 1e-10, 2, &[("w_ds_start", 200.0), ("d_spin", d)]);
    let delta = inst.real("delta");
    for k in 0..1000 {
        assert_eq!(inst.do_step(k as f64 * H, H), OK);
    }
    let decay = (-d * 1.0 / delta).exp();
    let w = inst.real("w_ds");
    assert!(
        (w - 200.0 * decay).abs() < 1e-8 * 200.0,
        "w = {w}, expected {}",
        200.0 * decay
    );
    let lost = 0.5 * delta * 200.0 * 200.0 * (1.0 - decay * decay);
    assert!((inst.real("energy_damping") - lost).abs() < 1e-8 * lost);
}

#[test]
fn energy_balance_with_casing_rotation_torques_and_shifts() {
    // Without drag, with torques held and omega linear over each step, every term of the
    // balance is exact from the outputs at the step's ends:
    //   engine   tau_eng rho_eng dtheta_ds
    //   chain    tau_ext (mean omega_y h + dtheta_ds)
    //   casing   -int M_total . omega = -M_y mean(omega_y) h + d(omega^T J_eff omega)/2
    //            (M_x omega_x + M_z omega_z = 0; M_y is constant over the step)
    //   shift    E drops by shift_loss + omega_y shift_impulse at the communication point.
    let fmu = Fmu::load(MODEL);
    let train = Train::default_twin();
    let inst = train.start(&fmu, 1e-8, 1, &[("w_ds_start", 40.0)]);
    let omega_vrs = [fmu.vr("omega_x"), fmu.vr("omega_y"), fmu.vr("omega_z")];
    let shifts = [(300, 2), (500, 3), (650, 4), (800, 3), (900, 5)];
    let j_eff = |inst: &Instance, w: V3| {
        let (a, p) = (inst.real("alpha"), inst.real("J_pitch"));
        0.5 * (a * (w[0] * w[0] + w[2] * w[2]) + p * w[1] * w[1])
    };
    let mut worst = 0.0f64;
    let mut e_scale = 0.0f64;
    let mut dissipated = 0.0;
    set_inputs(&inst, 0.0, 0.0, casing(0.0));
    for k in 0..1000 {
        let t = k as f64 * H;
        let (w0, w1) = (casing(t), casing(t + H));
        let slope = scale(1.0 / H, add(w1, scale(-1.0, w0)));
        let (tau_eng, tau_ext) = (25.0 + 10.0 * (7.0 * t).sin(), -60.0 * t);
        set_inputs(&inst, tau_eng, tau_ext, w0);
        assert_eq!(
            inst.set_input_derivatives(&omega_vrs, &[1, 1, 1], &slope),
            OK
        );
        let (e0, theta0, shifts_before) = (
            inst.real("E_kin"),
            inst.real("theta_ds"),
            inst.int("shift_count"),
        );
        if let Some(&(_, g)) = shifts.iter().find(|(s, _)| *s == k) {
            assert_eq!(inst.set_int("gear", g), OK);
        }
        assert_eq!(inst.do_step(t, H), OK);
        let dtheta = inst.real("theta_ds") - theta0;
        let mean_wy = 0.5 * (w0[1] + w1[1]);
        let mut change = inst.real("E_kin") - e0;
        if inst.int("shift_count") > shifts_before {
            let loss = inst.real("shift_loss");
            assert!(loss >= 0.0);
            dissipated += loss;
            change += loss + w0[1] * inst.real("shift_impulse");
        }
        // With the J_eff of the gear engaged during the step.
        let rigid = j_eff(&inst, w1) - j_eff(&inst, w0);
        let work = tau_eng * inst.real("rho_eng") * dtheta + tau_ext * (mean_wy * H + dtheta)
            - inst.real("M_y") * mean_wy * H
            + rigid;
        e_scale = e_scale.max(inst.real("E_kin"));
        worst = worst.max((change - work).abs());
    }
    assert!(
        worst < 1e-9 * e_scale,
        "energy balance off by {worst:e} J of {e_scale} J"
    );
    assert!((inst.real("energy_shift") - dissipated).abs() < 1e-12 * dissipated);
    assert!(dissipated > 0.0);
}

#[test]
fn a_shift_projects_the_momentum_on_the_new_ratios_and_never_creates_energy() {
    let fmu = Fmu::load(MODEL);
    let train = Train::default_twin();
    let omega = [0.4, 0.25, -0.6];
    for (from, to) in [(1, 2), (2, 3), (3, 2), (6, 1), (1, 6), (4, 5)] {
        let inst = train.start(&fmu, 1e-8, from, &[("w_ds_start", 120.0)]);
        set_inputs(&inst, 30.0, -50.0, omega);
        for k in 0..100 {
            assert_eq!(inst.do_step(k as f64 * H, H), OK);
        }
        let before: Vec<f64> = [
            "w_ds", "theta_ds", "theta_a", "E_kin", "alpha", "beta", "m_disc", "hx_disc", "dJ_yy",
            "dJ_xz",
        ]
        .iter()
        .map(|n| inst.real(n))
        .collect();
        let (w, t) = (before[0], 0.1);
        // The outputs after a zero-length wait would not show the shift: it happens in the step.
        inst.clear_log();
        assert_eq!(inst.set_int("gear", to), OK);
        assert_eq!(inst.do_step(t, 1e-9), OK);
        let (g0, g1) = ((from - 1) as usize, (to - 1) as usize);
        // Complete model: each shaft's absolute spin before, the projection after.
        let p_new: f64 = train
            .shafts
            .iter()
            .zip(train.ratios[g0].iter().zip(&train.ratios[g1]))
            .map(|(s, (r, r1))| r1 * s.jyy * (omega[1] + r * w))
            .sum();
        let w_new = train.speed(g1, omega[1], p_new);
        assert!(
            (inst.real("w_ds") - w_new).abs() < 1e-6 * w_new.abs(),
            "{from}->{to}: w {} vs {w_new}",
            inst.real("w_ds")
        );
        let loss: f64 = 0.5
            * train
                .shafts
                .iter()
                .zip(train.ratios[g0].iter().zip(&train.ratios[g1]))
                .map(|(s, (r, r1))| s.jyy * (r * w - r1 * w_new).powi(2))
                .sum::<f64>();
        assert!(loss > 0.0);
        assert!(
            (inst.real("shift_loss") - loss).abs() < 1e-6 * loss,
            "{from}->{to}: loss {} vs {loss}",
            inst.real("shift_loss")
        );
        // Kinetic energy: what the shafts lose is the loss plus the work of the impulse the
        // casing takes up.
        let drop = before[3] - inst.real("E_kin");
        let impulse = inst.real("shift_impulse");
        assert!(
            (drop - loss - omega[1] * impulse).abs() < 1e-6 * before[3],
            "{from}->{to}: energy"
        );
        // Continuous: angles, and what does not depend on the gear.
        assert!((inst.real("theta_ds") - before[1]).abs() < 1e-6);
        assert!((inst.real("theta_a") - before[2]).abs() < 1e-5 * before[2].abs());
        for (i, n) in ["alpha", "beta", "m_disc", "hx_disc", "dJ_yy", "dJ_xz"]
            .iter()
            .enumerate()
        {
            assert_eq!(inst.real(n), before[4 + i], "{n}");
        }
        assert_eq!(inst.int("gear_engaged"), to);
        let log = inst.log_text();
        assert!(
            log.contains(&format!("shift from gear {from} to {to}")),
            "{log}"
        );
    }
}

#[test]
fn an_invalid_gear_is_refused_naming_it_and_changes_nothing() {
    let fmu = Fmu::load(MODEL);
    let train = Train::default_twin();
    let inst = train.start(&fmu, 1e-8, 2, &[("w_ds_start", 100.0)]);
    set_inputs(&inst, 10.0, 0.0, [0.0; 3]);
    assert_eq!(inst.do_step(0.0, H), OK);
    let (w, theta) = (inst.real("w_ds"), inst.real("theta_ds"));
    assert_eq!(inst.set_int("gear", 9), ERROR, "outside the declared range");
    assert!(inst.log_text().contains("gear = 9"), "{}", inst.log_text());
    assert_eq!(
        inst.set_int("gear", 7),
        OK,
        "within the declared range 1..8"
    );
    assert_eq!(inst.do_step(H, H), ERROR);
    let log = inst.log_text();
    assert!(
        log.contains("gear = 7") && log.contains("nGears = 6"),
        "{log}"
    );
    assert_eq!(inst.real("w_ds"), w);
    assert_eq!(inst.real("theta_ds"), theta);
    assert_eq!(inst.int("gear_engaged"), 2);
}

#[test]
fn impossible_parameters_are_refused_naming_them() {
    let fmu = Fmu::load(MODEL);
    let refused = |train: &Train, reals: &[(&str, f64)], expected: &[&str]| {
        let inst = fmu.instantiate("refused");
        assert_eq!(inst.enter_initialization_mode(), OK);
        train.set(&inst);
        // A value outside the declared range is refused when set, others at initialization.
        let at_set = reals.iter().any(|(n, v)| inst.set(n, *v) != OK);
        if !at_set {
            assert_eq!(
                inst.exit_initialization_mode(),
                ERROR,
                "{reals:?} {train:?}"
            );
        }
        let log = inst.log_text();
        for e in expected {
            assert!(log.contains(e), "'{e}' not in: {log}");
        }
    };
    let twin = Train::default_twin();
    refused(
        &twin,
        &[("Jyy[2]", -0.001)],
        &["Jyy[2] = -0.001", "outside its range"],
    );
    refused(&twin, &[("m[3]", -1.0)], &["m[3] = -1"]);
    refused(&twin, &[("rho[4,2]", 0.0)], &["rho[4,2] = 0", "nonzero"]);
    refused(
        &twin,
        &[("rho[2,4]", 1.1)],
        &["rho[2,4] = 1.1", "sprocket shaft"],
    );
    refused(&twin, &[("Jyy[1]", 0.2)], &["Jyy[1] = 0.2", "2 Jxx[1]"]);
    let mut locked = twin.clone();
    locked.ratios[2] = vec![1.0; 4];
    refused(&locked, &[], &["rho[3,1] = 1", "in gear 3", "degenerate"]);
}

/// A casing turning at 1e160 rad/s is a finite input the model accepts, but its kinetic
/// energy, alpha omega^2 / 2, overflows to inf. A getter then returns fmi2Error naming the
/// output, its value, the time and the inputs; so does the step, which changes nothing (the
/// instance keeps the values it had). The random call sequences found it (E_kin = inf after an
/// accepted step).
#[test]
fn an_output_that_overflows_is_refused_by_getters_and_the_step() {
    let names = ["theta_ds", "w_ds", "p", "E_kin"];
    let fmu = Fmu::load(MODEL);
    let inst = fmu.instantiate("overflow");
    inst.initialize(0.0, None, &[]);
    assert_eq!(inst.set("tau_eng", 5.0), OK);
    assert_eq!(inst.do_step(0.0, H), OK);
    let before: Vec<f64> = names.iter().map(|n| inst.real(n)).collect();
    assert_eq!(inst.set("omega_x", 1e160), OK, "{}", inst.log_text());
    let mut x = [0.0];
    assert_eq!(inst.get_real(&[fmu.vr("E_kin")], &mut x), ERROR);
    let log = inst.log_text();
    assert!(
        log.contains(&format!("t = {H}: E_kin = inf is not a finite number"))
            && log.contains("omega_x = 1e160"),
        "{log}"
    );
    assert_eq!(inst.do_step(H, H), ERROR);
    let log = inst.log_text();
    assert!(
        log.contains(&format!(
            "step from t = {H} failed: t = {}: E_kin = inf",
            2.0 * H
        )),
        "{log}"
    );
    let after: Vec<f64> = names.iter().map(|n| inst.real(n)).collect();
    assert_eq!(before, after, "the refused step moved the instance");
}
