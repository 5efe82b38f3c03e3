//! The linear model of each FMU at an operating point (`fmu_harness::linear`, what
//! `cargo xtask linearize` writes), against closed forms and against central differences of the
//! same FMU.

use fmu_harness::linear::{modes, operating_point, Linear};
use fmu_harness::{models_under_test, Fmu};

/// The linear model from the FMU's directional derivatives at `at` of the reference scenario,
/// and the instance's parameter `name`.
fn linear_at(fmu: &Fmu, at: f64) -> (Linear, impl Fn(&str) -> f64 + '_) {
    let (inst, time) = operating_point(fmu, None, Some(at)).unwrap();
    let lin = Linear::exact(fmu, &inst, time).unwrap();
    let values: Vec<(String, f64)> = fmu
        .md
        .model_variables
        .iter()
        .filter(|v| matches!(v.kind, model_description::VariableType::Real { .. }))
        .map(|v| (v.name.clone(), inst.real(&v.name)))
        .collect();
    let value = move |name: &str| {
        values
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no Real variable {name}"))
            .1
    };
    (lin, value)
}

/// Entry (`row`, `column`) of a matrix whose rows are named `rows` and columns `columns`.
fn entry(m: &[Vec<f64>], (rows, columns): (&[String], &[String]), row: &str, column: &str) -> f64 {
    let at = |names: &[String], name: &str| names.iter().position(|n| n == name).unwrap();
    m[at(rows, row)][at(columns, column)]
}

/// The Gear is a double integrator of the reflected inertia `J_r = J_b + ratio^2 J_a`:
/// `A = [[0, 1], [0, 0]]`, `B = [[0, 0], [ratio/J_r, 1/J_r]]`, both eigenvalues 0, no mode; the
/// accelerations pass the torques straight through (D).
#[test]
fn the_gear_is_a_double_integrator_of_its_reflected_inertia() {
    let fmu = Fmu::load("Gear");
    let (lin, p) = linear_at(&fmu, 0.5);
    let (r, j_a) = (p("ratio"), p("J_a"));
    let j_r = p("J_b") + r * r * j_a;
    assert_eq!(lin.states, ["phi_b", "w_b"]);
    assert_eq!(lin.a, [[0.0, 1.0], [0.0, 0.0]]);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-14 * b.abs().max(1.0);
    let b = [[0.0, 0.0], [r / j_r, 1.0 / j_r]];
    for (row, expected) in lin.b.iter().zip(b) {
        assert!(
            close(row[0], expected[0]) && close(row[1], expected[1]),
            "{:?}",
            lin.b
        );
    }
    // a_a = ratio a_b; tau_mesh = J_a a_a - tau_a; the angles and speeds follow the states.
    let expected = [
        ("a_b", "tau_a", r / j_r),
        ("a_b", "tau_b", 1.0 / j_r),
        ("a_a", "tau_a", r * r / j_r),
        ("tau_mesh", "tau_a", j_a * r * r / j_r - 1.0),
        ("tau_mesh", "tau_b", j_a * r / j_r),
    ];
    for (y, u, value) in expected {
        assert!(
            close(entry(&lin.d, (&lin.outputs, &lin.inputs), y, u), value),
            "d{y}/d{u}"
        );
    }
    assert_eq!(
        entry(&lin.c, (&lin.outputs, &lin.states), "phi_a", "phi_b"),
        r
    );
    assert_eq!(entry(&lin.c, (&lin.outputs, &lin.states), "w_a", "w_b"), r);
    assert_eq!(lin.eigenvalues(), [(0.0, 0.0), (0.0, 0.0)]);
    assert!(modes(&lin.eigenvalues()).is_empty());
    // The response of the speed to a torque is that of an integrator, 1/(J_r s).
    let w_b = lin.outputs.iter().position(|n| n == "w_b").unwrap();
    let h = lin.response(w_b, 1, 10.0).unwrap();
    let s = 2.0 * std::f64::consts::PI * 10.0;
    assert!(close(h.im, -1.0 / (j_r * s)) && h.re.abs() < 1e-15, "{h}");
}

/// Without losses the VariableRatioTransmission's compliance is one torsional mode:
/// `phi'' + k_v K phi' + k_p K phi = ...` with `K = 1/J_B + r^2/J_F` (the follower's inertia
/// reflected through the ratio), so `w_n^2 = k_p K` and `zeta = k_v K / (2 w_n)`; the other
/// four eigenvalues are 0 (both angles, the rigid rotation, the energy dissipated).
#[test]
fn the_variable_ratio_transmission_has_its_torsional_mode() {
    let fmu = Fmu::load("VariableRatioTransmission");
    let (lin, p) = linear_at(&fmu, 0.25);
    let k = 1.0 / p("J_B") + p("r") * p("r") / p("J_F");
    let wn = (p("k_p") * k).sqrt();
    let (hz, zeta) = (wn / (2.0 * std::f64::consts::PI), p("k_v") * k / (2.0 * wn));
    let modes = modes(&lin.eigenvalues());
    assert_eq!(modes.len(), 1, "{modes:?}");
    let rel = |a: f64, b: f64| (a - b).abs() / b.abs();
    assert!(
        rel(modes[0].hz, hz) < 1e-10,
        "{} Hz against {hz}",
        modes[0].hz
    );
    assert!(
        rel(modes[0].damping_ratio, zeta) < 1e-8,
        "{} against {zeta}",
        modes[0].damping_ratio
    );
    let zeros = lin
        .eigenvalues()
        .iter()
        .filter(|(re, im)| re.hypot(*im) < 1e-6 * wn)
        .count();
    assert_eq!(zeros, 4, "{:?}", lin.eigenvalues());
    eprintln!(
        "VariableRatioTransmission at r = {}: {hz} Hz, zeta {zeta}; linear model: {:?}",
        p("r"),
        modes[0]
    );
}

/// On every FMU, at the middle of its reference scenario, the linear model from the FMU's
/// directional derivatives agrees with the one from central differences of its derivatives
/// and outputs, entry by entry, within what differences resolve.
/// The ChainDrive's chain mode with a run taut, against its drive line with the swing arm held
/// (the suspension 10^5 times stiffer): the drive sprocket (J1 = J_ds, bearing c1 = gamma_ds)
/// and the wheel (J2 = J_rw, bearing and brake c2 = gamma_rw + c_brake) joined by the taut run
/// (k = k_chain, c = c_chain), which each sprocket pays out at its pitch radius (r1 = r_ds,
/// r2 = r_ws): with a = (r1, -r2), det(M s^2 + C s + (k + c s) a a^T) = s P(s),
///   P(s) = (J1 s + c1)(J2 s + c2) s + (k + c s)(r1^2 (J2 s + c2) + r2^2 (J1 s + c1)),
/// whose roots are the chain mode's pair and the drive line's decay. Each must be an eigenvalue
/// of the linear model at the end of the reference scenario, to 1e-6 of its size.
#[test]
fn the_chain_drive_has_the_chain_mode_of_its_drive_line() {
    use fmu_harness::linear::operating_point_of;
    use fmu_harness::scenario::scenarios;
    use model_description::VariableType;
    use nalgebra::Matrix3;
    let fmu = Fmu::load("ChainDrive");
    let start = |name: &str| match fmu.md.variable(name).map(|v| &v.kind) {
        Some(VariableType::Real { start: Some(s), .. }) => *s,
        other => panic!("{name}: {other:?}"),
    };
    let mut sc = scenarios("ChainDrive").remove(0);
    sc.params.push(("k_susp".into(), 1e5 * start("k_susp")));
    let at = sc.stop;
    let inst = operating_point_of(&fmu, &sc, at);
    let mode = inst.int("chain_mode");
    assert!(
        mode == 1 || mode == -1,
        "one run taut, not chain_mode {mode}"
    );
    let lin = Linear::exact(&fmu, &inst, at).unwrap();
    let (j1, j2, r1, r2) = (start("J_ds"), start("J_rw"), start("r_ds"), start("r_ws"));
    let (k, c) = (start("k_chain"), start("c_chain"));
    let c1 = start("gamma_ds");
    let c2 = start("gamma_rw") + sc.inputs_at(at)[2];
    assert_eq!(sc.names[2], "c_brake");
    let (a, b) = (r1 * r1 * j2 + r2 * r2 * j1, r1 * r1 * c2 + r2 * r2 * c1);
    // P(s) / (J1 J2) = s^3 + p2 s^2 + p1 s + p0, and its companion matrix.
    let p2 = (j1 * c2 + j2 * c1 + c * a) / (j1 * j2);
    let p1 = (c1 * c2 + k * a + c * b) / (j1 * j2);
    let p0 = k * b / (j1 * j2);
    let companion = Matrix3::new(0.0, 0.0, -p0, 1.0, 0.0, -p1, 0.0, 1.0, -p2);
    let eigenvalues = lin.eigenvalues();
    for root in companion.complex_eigenvalues().iter() {
        let (gap, nearest) = eigenvalues
            .iter()
            .map(|(re, im)| ((re - root.re).hypot(im - root.im), (*re, *im)))
            .min_by(|x, y| x.0.total_cmp(&y.0))
            .unwrap();
        assert!(
            gap <= 1e-6 * root.norm(),
            "drive line root {root} against the linear model's {nearest:?} ({eigenvalues:?})"
        );
        eprintln!(
            "drive line root {root}: {:.1e} of it from {nearest:?}",
            gap / root.norm()
        );
    }
    eprintln!(
        "ChainDrive, swing arm held, chain_mode {mode}: drive line {:?}; modes {:?}",
        companion.complex_eigenvalues(),
        modes(&eigenvalues)
    );
}

#[test]
fn the_exact_linear_model_agrees_with_differences() {
    for model in models_under_test() {
        let fmu = Fmu::load(&model);
        let stop = fmu_harness::scenario::scenarios(&model)[0].stop;
        let (inst, time) = operating_point(&fmu, None, Some(0.5 * stop)).unwrap();
        let exact = Linear::exact(&fmu, &inst, time).unwrap();
        let fd = Linear::differences(&fmu, &inst, time).unwrap();
        // Each entry against the largest of its row of [A B] or [C D]: what the differences
        // of that derivative or output resolve.
        let mut worst = (0.0f64, String::new());
        let largest = |rows: [&Vec<Vec<f64>>; 2], i: usize| {
            rows.iter()
                .flat_map(|m| m[i].iter())
                .fold(1e-300f64, |a, v| a.max(v.abs()))
        };
        let blocks = [
            ("A", &exact.a, &fd.a, [&exact.a, &exact.b]),
            ("B", &exact.b, &fd.b, [&exact.a, &exact.b]),
            ("C", &exact.c, &fd.c, [&exact.c, &exact.d]),
            ("D", &exact.d, &fd.d, [&exact.c, &exact.d]),
        ];
        for (name, e, f, row) in blocks {
            for (i, (re, rf)) in e.iter().zip(f).enumerate() {
                let scale = largest(row, i);
                for (j, (a, b)) in re.iter().zip(rf).enumerate() {
                    let dev = (a - b).abs() / scale;
                    if dev > worst.0 {
                        worst = (dev, format!("{name}[{i}][{j}]: {a} against {b}"));
                    }
                }
            }
        }
        eprintln!(
            "{model}: largest deviation {:.1e} of its row ({})",
            worst.0, worst.1
        );
        // Measured: at most 6.3e-9 (the FastDrivetrain); 1e-7 leaves a margin of 16.
        assert!(worst.0 < 1e-7, "{model}: {}", worst.1);
    }
}
