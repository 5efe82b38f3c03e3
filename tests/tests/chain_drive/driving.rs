//! Driving the FMU in the tests: an instance started in a chain model, its inputs, its energy
//! balance and the work the inputs do over a run, and the input histories the runs use.

use super::*;

/// No friction, damping or brake anywhere.
pub(crate) const LOSSLESS: [(&str, f64); 4] = [
    ("gamma_ds", 0.0),
    ("gamma_rw", 0.0),
    ("c_susp", 0.0),
    ("c_chain", 0.0),
];

pub(crate) fn start<'a>(fmu: &'a Fmu, model: f64, params: &[(&str, f64)]) -> Instance<'a> {
    let inst = fmu.instantiate("chain");
    let mut all = vec![("chain_model", model)];
    all.extend_from_slice(params);
    let ints: Vec<(&str, f64)> = all
        .iter()
        .filter(|(n, _)| *n == "chain_model")
        .copied()
        .collect();
    let reals: Vec<(&str, f64)> = all
        .iter()
        .filter(|(n, _)| *n != "chain_model")
        .copied()
        .collect();
    assert_eq!(inst.setup_experiment(None, 0.0, None), OK);
    for (n, v) in &ints {
        assert_eq!(inst.set_int(n, *v as i32), OK);
    }
    for (n, v) in &reals {
        assert_eq!(inst.set(n, *v), OK, "{n}");
    }
    assert_eq!(inst.enter_initialization_mode(), OK);
    assert_eq!(inst.exit_initialization_mode(), OK, "{}", inst.log_text());
    inst
}

fn set_inputs(inst: &Instance, tau_eng: f64, tau_load: f64, c_brake: f64) {
    for (n, v) in [
        ("tau_eng", tau_eng),
        ("tau_load", tau_load),
        ("c_brake", c_brake),
    ] {
        assert_eq!(inst.set(n, v), OK);
    }
}

pub(crate) fn energy(inst: &Instance) -> f64 {
    [
        "energy_kinetic",
        "energy_gravity",
        "energy_suspension",
        "energy_chain",
        "energy_dissipated",
    ]
    .iter()
    .map(|n| inst.real(n))
    .sum()
}

/// Steps from `t0` to `t1` with the inputs `u(t)` held over each step; returns the work the
/// inputs did (exact for held inputs: torque times angle increment).
pub(crate) fn run(inst: &Instance, t0: f64, t1: f64, h: f64, u: impl Fn(f64) -> [f64; 3]) -> f64 {
    let mut work = 0.0;
    let n = ((t1 - t0) / h).round() as usize;
    for k in 0..n {
        let t = t0 + k as f64 * h;
        let [tau_eng, tau_load, c_brake] = u(t);
        set_inputs(inst, tau_eng, tau_load, c_brake);
        let before = [inst.real("theta_ds"), inst.real("theta_wheel")];
        assert_eq!(inst.do_step(t, h), OK, "t = {t}: {}", inst.log_text());
        work += tau_eng * (inst.real("theta_ds") - before[0])
            + tau_load * (inst.real("theta_wheel") - before[1]);
    }
    work
}
/// A ride: traction, engine braking (the chain runs through its slack into the lower run),
/// traction again, then the brake.
pub(crate) fn ride(t: f64) -> [f64; 3] {
    let tau_eng = if t < 0.6 {
        25.0 * (t / 0.2).min(1.0)
    } else if t < 1.0 {
        -15.0
    } else {
        20.0
    };
    let c_brake = if t >= 1.5 { 2.0 } else { 0.0 };
    [tau_eng, -10.0, c_brake]
}
/// Inputs that make the arm squat and extend while either run pulls in turn.
pub(crate) fn swinging(t: f64) -> [f64; 3] {
    let tau = if t < 0.3 {
        30.0
    } else if t < 0.6 {
        -20.0
    } else {
        5.0 * (7.0 * t).sin()
    };
    [tau, -40.0 * (t < 0.8) as i32 as f64, 0.0]
}
