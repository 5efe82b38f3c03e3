//! The CVT FMU through the C ABI: rest, power balance with moving sheaves, held sheaves as a
//! Gear, a travel stop hit and left, the constraint slope against finite differences.

use fmu_harness::{Fmu, Instance, ERROR, OK};

const J1: f64 = 0.01;
const J2: f64 = 0.02;
const M1: f64 = 0.5;
const M2: f64 = 0.8;

fn start<'a>(fmu: &'a Fmu, name: &str, params: &[(&str, f64)]) -> Instance<'a> {
    let inst = fmu.instantiate(name);
    inst.initialize(0.0, None, params);
    inst
}

fn set_inputs(inst: &Instance, tau_1: f64, tau_2: f64, f_1: f64, f_2: f64) {
    for (n, v) in [
        ("tau_1", tau_1),
        ("tau_2", tau_2),
        ("F_1", f_1),
        ("F_2", f_2),
    ] {
        assert_eq!(inst.set(n, v), OK);
    }
}

fn kinetic_energy(i: &Instance) -> f64 {
    0.5 * (J1 * i.real("w1").powi(2) + J2 * i.real("w2").powi(2))
        + 0.5 * (M1 * i.real("v1").powi(2) + M2 * i.real("v2").powi(2))
}

/// The clamping force on the secondary that balances F_1 at the current position.
fn balance(inst: &Instance, f_1: f64) -> f64 {
    -f_1 * inst.real("ds1_ds2")
}

#[test]
fn starts_from_rest_at_zero_speed() {
    let fmu = Fmu::load("CVT");
    let inst = start(&fmu, "rest", &[]);
    let f2 = balance(&inst, 40.0);
    set_inputs(&inst, 0.0, 0.0, 40.0, f2);
    for k in 0..200 {
        assert_eq!(inst.do_step(k as f64 * 1e-3, 1e-3), OK);
    }
    for name in ["w1", "w2", "v2", "s2", "phi1"] {
        assert!(
            inst.real(name).abs() < 1e-12,
            "{name} = {}",
            inst.real(name)
        );
    }
    assert!((inst.real("ratio") - 1.5).abs() < 1e-12);
    // From rest, a torque turns both pulleys with w1/w2 = D2/D1.
    set_inputs(&inst, 0.05, 0.0, 40.0, f2);
    for k in 200..300 {
        assert_eq!(inst.do_step(k as f64 * 1e-3, 1e-3), OK);
    }
    assert!(inst.real("w1") > 0.0);
    assert!((inst.real("w1") / inst.real("w2") - inst.real("ratio")).abs() < 1e-12);
}

#[test]
fn power_balance_holds_with_moving_sheaves() {
    let fmu = Fmu::load("CVT");
    let inst = start(&fmu, "power", &[("w1_start", 0.5)]);
    let (e0, mut e, mut work) = (kinetic_energy(&inst), kinetic_energy(&inst), 0.0);
    let h = 1e-3;
    let f2 = balance(&inst, 50.0);
    let mut s2_range = (f64::MAX, f64::MIN);
    for k in 0..1500 {
        let t = k as f64 * h;
        let u = (
            0.05 * (3.0 * t).sin(),
            -0.02,
            50.0,
            f2 + 0.5 * (9.0 * t).sin(),
        );
        set_inputs(&inst, u.0, u.1, u.2, u.3);
        let before = ["phi1", "phi2", "s1", "s2"].map(|n| inst.real(n));
        assert_eq!(inst.do_step(t, h), OK, "{}", inst.log_text());
        let after = ["phi1", "phi2", "s1", "s2"].map(|n| inst.real(n));
        // Inputs are held over the step: their work is exact.
        let dw = u.0 * (after[0] - before[0])
            + u.1 * (after[1] - before[1])
            + u.2 * (after[2] - before[2])
            + u.3 * (after[3] - before[3]);
        work += dw;
        let e1 = kinetic_energy(&inst);
        assert!(
            (e1 - e - dw).abs() < 1e-9 * (1.0 + e1),
            "t = {t}: dE {} vs work {dw}",
            e1 - e
        );
        e = e1;
        s2_range = (s2_range.0.min(after[3]), s2_range.1.max(after[3]));
        // The working diameters follow the documented sheave geometry
        // D_i = D_i_bar + c_i (s_i - s_i_bar), defaults 0.08, 0.12, c_i = 4, s_i_bar = 0.
        assert!((inst.real("D1") - (0.08 + 4.0 * after[2])).abs() < 1e-15);
        assert!((inst.real("D2") - (0.12 + 4.0 * after[3])).abs() < 1e-15);
        // The accelerations are the time derivatives of the speeds (inputs held). Measured:
        // at most 3e-9 relative; the bound leaves a margin of 15.
        if k % 100 == 99 {
            for (acc, speed) in [("a1", "w1"), ("a2", "v2")] {
                let fd = inst.time_derivative(speed, t + h, 1e-6);
                let a = inst.real(acc);
                assert!(
                    (fd - a).abs() < 5e-8 * a.abs().max(1e-3),
                    "t = {t}: {acc} = {a}, d{speed}/dt = {fd}"
                );
            }
        }
    }
    assert_eq!(inst.int("sheave_mode"), 0);
    assert!(
        s2_range.1 - s2_range.0 > 1e-4,
        "the sheaves must move: {s2_range:?}"
    );
    assert!((e - e0 - work).abs() < 1e-8 * (1.0 + work.abs()));
    assert_eq!(inst.real("energy_impact"), 0.0);
}

#[test]
fn held_sheaves_make_it_a_gear_with_ratio_d2_over_d1() {
    let cvt = Fmu::load("CVT");
    let gear = Fmu::load("Gear");
    let a = start(&cvt, "held", &[("s2_start", -0.004), ("s2_min", -0.004)]);
    set_inputs(&a, 0.0, 0.0, 0.0, -200.0);
    assert_eq!(a.do_step(0.0, 1e-3), OK);
    assert_eq!(a.int("sheave_mode"), -1, "pressed onto the lower stop");
    let ratio = a.real("ratio");
    let b = gear.instantiate("gear");
    b.initialize(1e-3, None, &[("ratio", ratio), ("J_a", J1), ("J_b", J2)]);
    let h = 1e-3;
    for k in 1..2000 {
        let t = k as f64 * h;
        let (tau_1, tau_2) = (0.3 * (2.0 * t).sin(), -0.1);
        set_inputs(&a, tau_1, tau_2, 0.0, -200.0);
        b.set("tau_a", tau_1);
        b.set("tau_b", tau_2);
        assert_eq!(a.do_step(t, h), OK);
        assert_eq!(b.do_step(t, h), OK);
        for (x, y) in [
            ("phi1", "phi_a"),
            ("w1", "w_a"),
            ("phi2", "phi_b"),
            ("w2", "w_b"),
        ] {
            let (p, q) = (a.real(x), b.real(y));
            assert!(
                (p - q).abs() < 1e-9 * (1.0 + q.abs()),
                "t = {t}: {x} {p} vs {y} {q}"
            );
        }
    }
    assert_eq!(a.int("sheave_mode"), -1);
    assert_eq!(a.real("v2"), 0.0);
}

#[test]
fn a_sheave_hits_its_travel_limit_and_leaves_it_again() {
    let fmu = Fmu::load("CVT");
    let mut hits = Vec::new();
    for h in [1e-3f64, 2e-2] {
        let inst = start(&fmu, "stop", &[]);
        let (s2_hi, f_bal) = (inst.real("s2_hi"), balance(&inst, 40.0));
        let mut modes = Vec::new();
        let steps = (0.6 / h).round() as usize;
        for k in 0..steps {
            let t = k as f64 * h;
            // Push up for 0.3 s, then pull back. (The belt geometry acts as a spring of about
            // 500 N/m on s2, so it takes more than that to hold the sheave at the stop.)
            let f2 = if t < 0.3 { f_bal + 10.0 } else { f_bal - 10.0 };
            set_inputs(&inst, 0.0, 0.0, 40.0, f2);
            assert_eq!(inst.do_step(t, h), OK, "{}", inst.log_text());
            let s2 = inst.real("s2");
            assert!(
                s2 <= s2_hi && s2 >= inst.real("s2_lo"),
                "never beyond a stop: {s2}"
            );
            modes.push(inst.int("sheave_mode"));
        }
        // Pushed onto the upper stop, held there, released the instant the force reverses,
        // then thrown onto the lower stop and held there.
        let at = |t: f64| modes[((t / h).round() as usize).min(steps) - 1];
        assert_eq!(at(0.29), 1, "h = {h}: held at the upper stop");
        assert_eq!(
            *modes.last().unwrap(),
            -1,
            "h = {h}: held at the lower stop"
        );
        let events = inst.event_times();
        assert_eq!(events.len(), 3, "h = {h}: hit, release, hit: {events:?}");
        assert!(
            (events[1] - 0.3).abs() < 1e-9,
            "released when the force reverses: {events:?}"
        );
        // Both stops were inelastic: the sheaves' kinetic energy went into energy_impact.
        assert!(inst.real("energy_impact") > 0.0);
        hits.push((events[0], events[2], inst.real("energy_impact")));
    }
    // The hits are located inside the step: the same instants for both communication steps.
    let ((a0, a2, ea), (b0, b2, eb)) = (hits[0], hits[1]);
    assert!((a0 - b0).abs() < 1e-8 && (a2 - b2).abs() < 1e-8, "{hits:?}");
    assert!((ea - eb).abs() < 1e-8 * ea, "{hits:?}");
}

#[test]
fn constraint_slope_matches_finite_differences_through_the_fmu() {
    let fmu = Fmu::load("CVT");
    let at = |s2: f64| {
        let inst = start(&fmu, "fd", &[("s2_start", s2)]);
        (inst.real("s1"), inst.real("ds1_ds2"))
    };
    let h = 1e-6;
    for k in -5..=5 {
        let s2 = k as f64 * 0.001;
        let (lo, _) = at(s2 - h);
        let (_, slope) = at(s2);
        let (hi, _) = at(s2 + h);
        assert!(((hi - lo) / (2.0 * h) - slope).abs() < 1e-8, "s2 = {s2}");
    }
}

#[test]
fn impossible_geometry_is_refused_with_the_reason() {
    let fmu = Fmu::load("CVT");
    for (params, needle) in [
        (vec![("C", 0.02)], "C = 0.02"),
        (vec![("s2_start", 0.05)], "s2_start = 0.05"),
        (vec![("s2_max", 0.03), ("s1_min", -0.03)], "out of range"),
        (vec![("m2", 0.0)], "m2 = 0"),
    ] {
        let inst = fmu.instantiate("bad");
        for (n, v) in &params {
            assert_eq!(inst.set(n, *v), OK);
        }
        assert_eq!(inst.enter_initialization_mode(), OK);
        assert_eq!(inst.exit_initialization_mode(), ERROR);
        assert!(
            inst.log_text().contains(needle),
            "{needle}: {}",
            inst.log_text()
        );
        for v in &fmu.md.model_variables {
            if matches!(v.kind, model_description::VariableType::Real { .. }) {
                assert!(inst.real(&v.name).is_finite(), "{} is not finite", v.name);
            }
        }
    }
}
