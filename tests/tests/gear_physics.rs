//! The Gear FMU's physics, through the C ABI of the packaged `.fmu`, against closed-form
//! solutions: (J_b + ratio^2 J_a) a_b = tau_b + ratio tau_a, phi_a = ratio phi_b.

use fmu_harness::{Fmu, Instance, OK};

const H: f64 = 1e-3;

struct Params {
    ratio: f64,
    j_a: f64,
    j_b: f64,
    phi0: f64,
    w0: f64,
}

impl Params {
    fn new(ratio: f64, j_a: f64, j_b: f64, phi0: f64, w0: f64) -> Self {
        Params {
            ratio,
            j_a,
            j_b,
            phi0,
            w0,
        }
    }
    /// An initialized instance with these parameters.
    fn start<'a>(&self, fmu: &'a Fmu, name: &str) -> Instance<'a> {
        let inst = fmu.instantiate(name);
        inst.initialize(0.0, None, &self.set());
        inst
    }
    fn set(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("ratio", self.ratio),
            ("J_a", self.j_a),
            ("J_b", self.j_b),
            ("phi_b_start", self.phi0),
            ("w_b_start", self.w0),
        ]
    }
    fn j(&self) -> f64 {
        self.j_b + self.ratio * self.ratio * self.j_a
    }
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()) + 1e-12
}

fn run_constant(inst: &Instance, tau_a: f64, tau_b: f64, steps: usize) {
    assert_eq!(inst.set("tau_a", tau_a), OK);
    assert_eq!(inst.set("tau_b", tau_b), OK);
    for k in 0..steps {
        assert_eq!(inst.do_step(k as f64 * H, H), OK, "{}", inst.log_text());
    }
}

#[test]
fn constant_torques_follow_the_closed_form() {
    let fmu = Fmu::load("Gear");
    let p = Params::new(3.0, 0.05, 0.4, 0.3, -2.0);
    let inst = p.start(&fmu, "analytic");
    let (tau_a, tau_b) = (0.7, -0.2);
    run_constant(&inst, tau_a, tau_b, 1500);
    let t = 1500.0 * H;
    let a_b = (tau_b + p.ratio * tau_a) / p.j();
    let w_b = p.w0 + a_b * t;
    let phi_b = p.phi0 + p.w0 * t + 0.5 * a_b * t * t;
    for (name, expected) in [
        ("a_b", a_b),
        ("w_b", w_b),
        ("phi_b", phi_b),
        ("a_a", p.ratio * a_b),
        ("w_a", p.ratio * w_b),
        ("phi_a", p.ratio * phi_b),
        ("tau_mesh", p.j_a * p.ratio * a_b - tau_a),
        ("J_reflected", p.j()),
        ("power_loss", 0.0),
    ] {
        let got = inst.real(name);
        assert!(
            close(got, expected, 1e-10),
            "{name}: got {got}, expected {expected}"
        );
    }
}

/// The torque relation tau_a_cut * ratio + tau_b_cut = 0 with Newton on each inertia.
#[test]
fn mesh_torque_satisfies_the_implicit_torque_relation() {
    let fmu = Fmu::load("Gear");
    let p = Params::new(-2.5, 0.2, 0.1, 0.0, 1.0);
    let inst = p.start(&fmu, "relation");
    run_constant(&inst, 1.3, 0.4, 10);
    let tau_a_cut = -inst.real("tau_mesh");
    // b side: J_b a_b = tau_b - tau_b_cut
    let tau_b_cut = 0.4 - p.j_b * inst.real("a_b");
    assert!(
        (tau_a_cut * p.ratio + tau_b_cut).abs() < 1e-12,
        "{tau_a_cut} {tau_b_cut}"
    );
}

#[test]
fn power_balance_holds_step_by_step_with_varying_torques() {
    let fmu = Fmu::load("Gear");
    let p = Params::new(2.0, 0.1, 0.2, 0.0, 0.5);
    let inst = p.start(&fmu, "power");
    let energy = |i: &Instance| {
        let (wa, wb) = (i.real("w_a"), i.real("w_b"));
        0.5 * (p.j_a * wa * wa + p.j_b * wb * wb)
    };
    let mut e = energy(&inst);
    let e0 = e;
    let mut work = 0.0;
    for k in 0..2000 {
        let t = k as f64 * H;
        let (tau_a, tau_b) = ((3.0 * t).sin(), 0.5 * (5.0 * t).cos() - 0.2);
        inst.set("tau_a", tau_a);
        inst.set("tau_b", tau_b);
        // Instantaneous: input power = dE/dt = J w_b a_b.
        let power = tau_a * inst.real("w_a") + tau_b * inst.real("w_b");
        let de_dt = p.j() * inst.real("w_b") * inst.real("a_b");
        assert!(
            (power - de_dt).abs() < 1e-12 * (1.0 + power.abs()),
            "t = {t}"
        );
        // Over the step the torques are held, so the work is exact: sum tau * delta phi.
        let (pa, pb) = (inst.real("phi_a"), inst.real("phi_b"));
        assert_eq!(inst.do_step(t, H), OK);
        let dw = tau_a * (inst.real("phi_a") - pa) + tau_b * (inst.real("phi_b") - pb);
        work += dw;
        let e1 = energy(&inst);
        assert!(
            (e1 - e - dw).abs() < 1e-10 * (1.0 + e1.abs()),
            "step at t = {t}"
        );
        e = e1;
        assert_eq!(inst.real("power_loss"), 0.0);
    }
    assert!(
        (e - e0 - work).abs() < 1e-9,
        "total: dE = {}, work = {work}",
        e - e0
    );
}

#[test]
fn holds_torque_at_rest_and_starts_from_zero_speed() {
    let fmu = Fmu::load("Gear");
    let p = Params::new(4.0, 0.3, 0.7, 0.0, 0.0);
    let inst = p.start(&fmu, "rest");
    // Balanced torques at zero speed: tau_b = -ratio tau_a. The gear transmits the torque and
    // nothing moves; the torque relation has no speed in it, so nothing is singular here.
    run_constant(&inst, 2.0, -8.0, 100);
    assert_eq!(inst.real("w_b"), 0.0);
    assert_eq!(inst.real("phi_b"), 0.0);
    assert_eq!(inst.real("a_b"), 0.0);
    assert!(
        (inst.real("tau_mesh") + 2.0).abs() < 1e-15,
        "the mesh balances tau_a"
    );
    // From rest, an unbalanced torque starts it in the right direction.
    assert_eq!(inst.set("tau_b", -7.0), OK);
    assert_eq!(inst.do_step(0.1, H), OK);
    let a_b = 1.0 / p.j();
    assert!(close(inst.real("w_b"), a_b * H, 1e-10));
    assert!(close(inst.real("phi_b"), 0.5 * a_b * H * H, 1e-10));
}

#[test]
fn torque_reversal_passes_through_zero_speed() {
    let fmu = Fmu::load("Gear");
    let p = Params::new(2.0, 0.1, 0.2, 0.0, 1.2);
    let inst = p.start(&fmu, "reversal");
    // Decelerates at 1 rad/s^2 from 1.2 rad/s: zero speed at 1.2 s, then reverses.
    let tau_b = -p.j();
    let mut signs = Vec::new();
    for k in 0..2000 {
        inst.set("tau_b", tau_b);
        assert_eq!(inst.do_step(k as f64 * H, H), OK);
        let t = (k + 1) as f64 * H;
        let w = inst.real("w_b");
        assert!((w - (1.2 - t)).abs() < 1e-10, "t = {t}: w_b = {w}");
        signs.push(w.signum());
    }
    assert!(signs.first() == Some(&1.0) && signs.last() == Some(&-1.0));
    let phi_end = 1.2 * 2.0 - 0.5 * 4.0;
    assert!((inst.real("phi_b") - phi_end).abs() < 1e-10);
}

#[test]
fn negative_ratio_reverses_the_direction() {
    let fmu = Fmu::load("Gear");
    let p = Params::new(-3.0, 0.1, 0.2, 0.1, 2.0);
    let inst = p.start(&fmu, "negative");
    // A positive tau_a drives the b side backwards.
    run_constant(&inst, 1.0, 0.0, 500);
    let t = 0.5;
    let a_b = (0.0 + p.ratio * 1.0) / p.j();
    assert!(a_b < 0.0);
    assert!(close(inst.real("w_b"), p.w0 + a_b * t, 1e-10));
    assert!(close(inst.real("w_a"), p.ratio * (p.w0 + a_b * t), 1e-10));
    assert!(close(
        inst.real("phi_a"),
        p.ratio * (p.phi0 + p.w0 * t + 0.5 * a_b * t * t),
        1e-10
    ));
    assert!(
        inst.real("w_a") * inst.real("w_b") < 0.0,
        "the flanges turn in opposite directions"
    );
}

#[test]
fn input_derivatives_ramp_the_inputs_over_a_step() {
    let fmu = Fmu::load("Gear");
    let p = Params::new(2.0, 0.1, 0.2, 0.0, 0.0);
    let inst = p.start(&fmu, "ramp");
    // tau_b(t) = s t handed over as a value and a slope at each communication point (10 ms).
    let s = 3.0;
    let vr = fmu.vr("tau_b");
    let h = 0.01;
    for k in 0..50 {
        let t = k as f64 * h;
        assert_eq!(inst.set("tau_b", s * t), OK);
        assert_eq!(inst.set_input_derivatives(&[vr], &[1], &[s]), OK);
        assert_eq!(inst.do_step(t, h), OK, "{}", inst.log_text());
    }
    // a = s t / J  =>  w = s t^2 / (2J), phi = s t^3 / (6J)
    let t: f64 = 0.5;
    assert!(
        close(inst.real("w_b"), s * t * t / (2.0 * p.j()), 1e-10),
        "{}",
        inst.real("w_b")
    );
    assert!(close(
        inst.real("phi_b"),
        s * t.powi(3) / (6.0 * p.j()),
        1e-10
    ));
    // Order 2 is beyond maxOrder 1 and is refused with a reason.
    assert_ne!(inst.set_input_derivatives(&[vr], &[2], &[1.0]), OK);
    assert!(inst.log_text().contains("order 2"), "{}", inst.log_text());
}

/// A long run: 10 s of drivetrain-like torques held over each 1 ms step (an engine
/// torque with a firing ripple, a road load growing with speed, a brake pulse), at the FMU's
/// default tolerance. Within a held step the acceleration is constant, so the exact solution is
/// a parabola per step: angle and speed must stay within 1e-6 of their ranges over 10,000 steps
/// (measured: rounding only, about 1e-14).
#[test]
fn ten_seconds_of_drivetrain_torques_stay_on_the_closed_form() {
    let fmu = Fmu::load("Gear");
    let p = Params::new(3.2, 0.05, 0.9, 0.0, 5.0);
    let inst = fmu.instantiate("long");
    inst.initialize(0.0, None, &p.set());
    let (mut phi, mut w) = (p.phi0, p.w0);
    let (mut phi_range, mut w_range) = (0.0f64, 0.0f64);
    let mut worst = [0.0f64; 2];
    let mut rows = Vec::with_capacity(10_000);
    for k in 0..10_000 {
        let t = k as f64 * H;
        let tau_a = 40.0 * (1.0 + 0.3 * (2.0 * std::f64::consts::PI * 25.0 * t).sin());
        let brake = if (6.0..7.5).contains(&t) { -300.0 } else { 0.0 };
        let tau_b = -2.0 * w - 0.05 * w * w.abs() + brake;
        assert_eq!(inst.set("tau_a", tau_a), OK);
        assert_eq!(inst.set("tau_b", tau_b), OK);
        assert_eq!(inst.do_step(t, H), OK, "{}", inst.log_text());
        let a = (tau_b + p.ratio * tau_a) / p.j();
        phi += w * H + 0.5 * a * H * H;
        w += a * H;
        phi_range = phi_range.max(phi.abs());
        w_range = w_range.max(w.abs());
        rows.push((phi, w, inst.real("phi_b"), inst.real("w_b")));
    }
    for (phi, w, got_phi, got_w) in rows {
        worst[0] = worst[0].max((got_phi - phi).abs() / phi_range);
        worst[1] = worst[1].max((got_w - w).abs() / w_range);
    }
    eprintln!(
        "10 s at the default tolerance: phi_b {:.1e}, w_b {:.1e} of the ranges",
        worst[0], worst[1]
    );
    assert!(worst[0] < 1e-6 && worst[1] < 1e-6, "{worst:?}");
}
