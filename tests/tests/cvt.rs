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
    // Apart over the whole travel ((D1 + D2)/2 peaks at 0.10126 m inside it): accepted.
    let inst = fmu.instantiate("apart");
    assert_eq!(inst.set("C", 0.102), OK);
    assert_eq!(inst.enter_initialization_mode(), OK);
    assert_eq!(inst.exit_initialization_mode(), OK, "{}", inst.log_text());
    for (params, needle) in [
        (vec![("C", 0.02)], "C = 0.02"),
        // Overlapping pulleys (default diameters 80 and 120 mm): the belt geometry alone
        // would accept these.
        (
            vec![("C", 0.05)],
            "C = 0.05 is invalid: the pulleys overlap",
        ),
        (
            vec![("C", 0.09)],
            "C = 0.09 is invalid: the pulleys overlap",
        ),
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

/// The belt CVT's sheave geometry from the documentation alone: `D_i = D_i_bar + c_i s_i`
/// (defaults), the open-belt length `L = 2C cos(beta) + (pi/2)(D1 + D2) + beta (D2 - D1)`,
/// `sin(beta) = (D2 - D1)/(2C)`, solved for s1 by bisection; `dL/dD1 = pi/2 - beta`,
/// `dL/dD2 = pi/2 + beta` give the slope ds1/ds2.
mod reference_geometry {
    use std::f64::consts::FRAC_PI_2;
    const C: f64 = 0.25;
    const C1: f64 = 4.0;
    const C2: f64 = 4.0;

    fn beta(s1: f64, s2: f64) -> f64 {
        (((0.12 + C2 * s2) - (0.08 + C1 * s1)) / (2.0 * C)).asin()
    }

    fn length(s1: f64, s2: f64) -> f64 {
        let (d1, d2, b) = (0.08 + C1 * s1, 0.12 + C2 * s2, beta(s1, s2));
        2.0 * C * b.cos() + FRAC_PI_2 * (d1 + d2) + b * (d2 - d1)
    }

    /// s1 keeping the belt length of the reference configuration (s1 = s2 = 0).
    pub fn s1(s2: f64) -> f64 {
        let l0 = length(0.0, 0.0);
        // 64 halvings of 0.04 reach below the ulp of s1.
        let (mut lo, mut hi) = (-0.02, 0.02);
        for _ in 0..64 {
            let mid = 0.5 * (lo + hi);
            // L grows with D1, so with s1.
            if length(mid, s2) < l0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }

    pub fn slope(s2: f64) -> f64 {
        let b = beta(s1(s2), s2);
        -C2 * (FRAC_PI_2 + b) / (C1 * (FRAC_PI_2 - b))
    }

    pub fn curvature(s2: f64) -> f64 {
        let h = 2e-6;
        (slope(s2 + h) - slope(s2 - h)) / (2.0 * h)
    }

    /// The s2 at which s1 reaches `s1_limit` (s1 falls as s2 rises).
    pub fn s2_where_s1_is(s1_limit: f64) -> f64 {
        // 64 halvings of 0.04 reach below the ulp of s1.
        let (mut lo, mut hi) = (-0.02, 0.02);
        for _ in 0..64 {
            let mid = 0.5 * (lo + hi);
            if s1(mid) > s1_limit {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }
}

/// The sheaves with the pulleys at rest, integrated independently: Lagrange's equation
/// `(m2 + m1 s1'^2) a2 + m1 s1' s1'' v2^2 = F2 + F1 s1'` with RK4 at 1e-6 s, stop contacts
/// located by bisection on the step, inelastic (v2 = 0, the kinetic energy lost), held while
/// the generalized force pushes into the stop. Returns the contact and release times, the
/// energy lost, and s2 every millisecond.
fn reference_stops(f_1: f64, f_2: impl Fn(f64) -> f64, t_end: f64) -> (Vec<f64>, f64, Vec<f64>) {
    use reference_geometry::{curvature, s2_where_s1_is, slope};
    let s2_hi = s2_where_s1_is(-0.006).min(0.006);
    let s2_lo = s2_where_s1_is(0.006).max(-0.006);
    let accel = |t: f64, s2: f64, v2: f64| {
        let (sp, spp) = (slope(s2), curvature(s2));
        (f_2(t) + f_1 * sp - M1 * sp * spp * v2 * v2) / (M2 + M1 * sp * sp)
    };
    let rk4 = |t: f64, x: [f64; 2], dt: f64| {
        let f = |t: f64, x: [f64; 2]| [x[1], accel(t, x[0], x[1])];
        let add = |a: [f64; 2], b: [f64; 2], c: f64| [a[0] + c * b[0], a[1] + c * b[1]];
        let k1 = f(t, x);
        let k2 = f(t + dt / 2.0, add(x, k1, dt / 2.0));
        let k3 = f(t + dt / 2.0, add(x, k2, dt / 2.0));
        let k4 = f(t + dt, add(x, k3, dt));
        [0, 1].map(|i| x[i] + dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]))
    };
    let dt = 1e-6;
    let n = (t_end / dt).round() as usize;
    assert_eq!(dt, 1.0 / 1e6);
    let (mut x, mut held, mut events, mut lost, mut every_ms) =
        ([0.0, 0.0], 0, vec![], 0.0, vec![]);
    for k in 0..n {
        // Exact multiples of the step: the force changes at t = 0.3 on the grid.
        let t = k as f64 / 1e6;
        if held != 0 {
            // Released when the generalized force no longer pushes into the stop.
            let push = f_2(t) + f_1 * slope(x[0]);
            if push * f64::from(held) <= 0.0 {
                held = 0;
                events.push(t);
            }
        }
        if held == 0 {
            let next = rk4(t, x, dt);
            let stop = if next[0] > s2_hi {
                Some((s2_hi, 1))
            } else if next[0] < s2_lo {
                Some((s2_lo, -1))
            } else {
                None
            };
            match stop {
                None => x = next,
                Some((at, side)) => {
                    let (mut lo, mut hi) = (0.0, dt);
                    for _ in 0..100 {
                        let mid = 0.5 * (lo + hi);
                        if (rk4(t, x, mid)[0] - at) * f64::from(side) < 0.0 {
                            lo = mid;
                        } else {
                            hi = mid;
                        }
                    }
                    let hit = rk4(t, x, hi);
                    let sp = slope(at);
                    lost += 0.5 * (M2 + M1 * sp * sp) * hit[1] * hit[1];
                    events.push(t + hi);
                    x = [at, 0.0];
                    held = side;
                }
            }
        }
        if (k + 1) % 1000 == 0 {
            every_ms.push(x[0]);
        }
    }
    (events, lost, every_ms)
}

#[test]
fn travel_stops_agree_with_an_independent_solution() {
    let fmu = Fmu::load("CVT");
    let f_1 = 40.0;
    let f_bal = -f_1 * reference_geometry::slope(0.0);
    let f_2 = |t: f64| if t < 0.3 { f_bal + 10.0 } else { f_bal - 10.0 };
    let (events, lost, s2_ref) = reference_stops(f_1, f_2, 0.6);
    assert_eq!(events.len(), 3, "hit, release, hit: {events:?}");
    let range = s2_ref.iter().fold(0.0f64, |m, s| m.max(s.abs()));
    for h in [1e-3f64, 2e-2] {
        let inst = start(&fmu, "stops", &[]);
        assert!(
            (inst.real("s2_hi") - reference_geometry::s2_where_s1_is(-0.006).min(0.006)).abs()
                < 1e-12
        );
        let steps = (0.6 / h).round() as usize;
        let mut worst = 0.0f64;
        for k in 0..steps {
            let t = k as f64 * h;
            set_inputs(&inst, 0.0, 0.0, f_1, f_2(t));
            assert_eq!(inst.do_step(t, h), OK, "{}", inst.log_text());
            let i = ((t + h) / 1e-3).round() as usize - 1;
            let e = (inst.real("s2") - s2_ref[i]).abs() / range;
            worst = worst.max(e);
        }
        let got = inst.event_times();
        let dev = got
            .iter()
            .zip(&events)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        eprintln!(
            "h = {h}: s2 off by {worst:.1e} of its range, events by {dev:.1e} s, energy by {:.1e}",
            (inst.real("energy_impact") - lost).abs() / lost
        );
        assert_eq!(got.len(), 3, "{got:?}");
        // Measured: s2 1.1e-10 of its range, events 1.7e-12 s, energy 9.3e-11 relative (the FMU
        // at 1e-10); the bounds leave a margin of about 20.
        assert!(dev < 5e-11, "events {got:?} vs {events:?}");
        assert!((inst.real("energy_impact") - lost).abs() < 2e-9 * lost);
        assert!(worst < 2e-9, "s2 off by {worst:.1e} of its range");
    }
}

/// The whole CVT integrated independently: q = (phi1, s2), w2 = rho w1 with rho = D1/D2,
/// `(J1 + J2 rho^2) a1 + 2 J2 rho rho' v2 w1 = tau_1 + rho tau_2` and
/// `(m2 + m1 s1'^2) a2 + m1 s1' s1'' v2^2 - J2 rho rho' w1^2 = F_2 + F_1 s1'` (Lagrange on the
/// kinetic energy of the documentation), with the geometry of [`reference_geometry`]. Classic
/// RK4 at `dt`, stop contacts located by bisection on the step, inelastic; a held sheave is
/// released when its generalized force pulls it away. `inputs(t, w1)` gives the inputs held over
/// the millisecond that starts at t. Returns (phi1, w1, s2) every millisecond and the event times.
fn reference_turning(
    w1_start: f64,
    inputs: impl Fn(f64, f64) -> [f64; 4],
    t_end: f64,
    dt: f64,
) -> (Vec<[f64; 3]>, Vec<f64>) {
    use reference_geometry::{curvature, s1, s2_where_s1_is, slope};
    let s2_hi = s2_where_s1_is(-0.006).min(0.006);
    let s2_lo = s2_where_s1_is(0.006).max(-0.006);
    // x = [phi1, w1, s2, v2]; held: the sheave on a stop.
    let f = |x: [f64; 4], u: [f64; 4], held: bool| {
        let [_, w1, s2, v2] = x;
        let [tau_1, tau_2, f_1, f_2] = u;
        let (s1p, d1, d2) = (slope(s2), 0.08 + 4.0 * s1(s2), 0.12 + 4.0 * s2);
        let rho = d1 / d2;
        let rho_p = (4.0 * s1p * d2 - 4.0 * d1) / (d2 * d2);
        let a1 = (tau_1 + rho * tau_2 - 2.0 * J2 * rho * rho_p * v2 * w1) / (J1 + J2 * rho * rho);
        let push = f_2 + f_1 * s1p + J2 * rho * rho_p * w1 * w1;
        let a2 = if held {
            0.0
        } else {
            (push - M1 * s1p * curvature(s2) * v2 * v2) / (M2 + M1 * s1p * s1p)
        };
        ([w1, a1, v2, a2], push)
    };
    let rk4 = |x: [f64; 4], u: [f64; 4], held: bool, dt: f64| {
        let add = |a: [f64; 4], b: [f64; 4], c: f64| [0, 1, 2, 3].map(|i| a[i] + c * b[i]);
        let k1 = f(x, u, held).0;
        let k2 = f(add(x, k1, dt / 2.0), u, held).0;
        let k3 = f(add(x, k2, dt / 2.0), u, held).0;
        let k4 = f(add(x, k3, dt), u, held).0;
        [0, 1, 2, 3].map(|i| x[i] + dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]))
    };
    let per_ms = (1e-3 / dt).round() as usize;
    let (mut x, mut held, mut events, mut out) = ([0.0, w1_start, 0.0, 0.0], 0i32, vec![], vec![]);
    for ms in 0..(t_end / 1e-3).round() as usize {
        let t_ms = ms as f64 * 1e-3;
        let u = inputs(t_ms, x[1]);
        for j in 0..per_ms {
            let t = t_ms + j as f64 * dt;
            if held != 0 && f(x, u, true).1 * f64::from(held) <= 0.0 {
                held = 0;
                events.push(t);
            }
            if held != 0 {
                x = rk4(x, u, true, dt);
                continue;
            }
            let next = rk4(x, u, false, dt);
            let side = if next[2] > s2_hi {
                1
            } else if next[2] < s2_lo {
                -1
            } else {
                x = next;
                continue;
            };
            let at = if side > 0 { s2_hi } else { s2_lo };
            let (mut lo, mut hi) = (0.0, dt);
            for _ in 0..60 {
                let mid = 0.5 * (lo + hi);
                if (rk4(x, u, false, mid)[2] - at) * f64::from(side) < 0.0 {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            let hit = rk4(x, u, false, hi);
            events.push(t + hi);
            // Inelastic: the sheave stops, the pulleys keep turning (no inertia couples them).
            // It stays only if its force presses it on: otherwise it leaves at once, from rest.
            let stopped = [hit[0], hit[1], at, 0.0];
            held = if f(stopped, u, true).1 * f64::from(side) > 0.0 {
                side
            } else {
                0
            };
            x = rk4(stopped, u, held != 0, dt - hi);
        }
        out.push([x[0], x[1], x[2]]);
    }
    (out, events)
}

/// A long run for the CVT: 10 s with the pulleys turning under an engine-like torque
/// and a speed-dependent load, and the secondary clamping force switched up and down every
/// 1.25 s, so that the sheaves run from stop to stop (every contact and release an event) while
/// the spin adds its own axial force. At the FMU's default tolerance, the primary's angle and
/// speed and the sheave position must stay within 1e-6 of their ranges of
/// [`reference_turning`] (RK4 at 0.1 ms, which 0.05 ms reproduces to 1e-11), and the events
/// must match.
#[test]
fn ten_seconds_turning_from_stop_to_stop_at_the_default_tolerance() {
    let fmu = Fmu::load("CVT");
    let f_1 = 40.0;
    let f_bal = -f_1 * reference_geometry::slope(0.0);
    let inputs = |t: f64, w1: f64| {
        let up = (t / 1.25).floor() as i64 % 2 == 0;
        [
            0.03 + 0.01 * (2.0 * t).sin(),
            -0.02 - 0.004 * w1,
            f_1,
            f_bal + if up { 8.0 } else { -8.0 },
        ]
    };
    let (reference, events) = reference_turning(2.0, inputs, 10.0, 1e-4);
    let range = reference
        .iter()
        .fold([0.0f64; 3], |m, x| [0, 1, 2].map(|i| m[i].max(x[i].abs())));
    let inst = start(&fmu, "long", &[("w1_start", 2.0)]);
    let mut worst = [0.0f64; 3];
    let mut x = [0.0, 2.0, 0.0];
    for (k, expected) in reference.iter().enumerate() {
        let t = k as f64 * 1e-3;
        let [tau_1, tau_2, f1, f2] = inputs(t, x[1]);
        set_inputs(&inst, tau_1, tau_2, f1, f2);
        assert_eq!(inst.do_step(t, 1e-3), OK, "{}", inst.log_text());
        x = [inst.real("phi1"), inst.real("w1"), inst.real("s2")];
        for i in 0..3 {
            worst[i] = worst[i].max((x[i] - expected[i]).abs() / range[i]);
        }
        // The reference's inputs are computed from its own speed: feed the FMU the same.
        x[1] = expected[1];
    }
    let got = inst.event_times();
    let dev = got
        .iter()
        .zip(&events)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    eprintln!(
        "10 s at the default tolerance: phi1 {:.1e}, w1 {:.1e}, s2 {:.1e} of the ranges; \
         {} events, times within {dev:.1e} s",
        worst[0],
        worst[1],
        worst[2],
        got.len()
    );
    assert!(
        events.len() >= 8,
        "the sheaves must go from stop to stop: {events:?}"
    );
    assert_eq!(got.len(), events.len(), "{got:?} vs {events:?}");
    assert!(dev < 1e-7, "events {got:?} vs {events:?}");
    assert!(worst.iter().all(|&e| e < 1e-6), "{worst:?}");
}
