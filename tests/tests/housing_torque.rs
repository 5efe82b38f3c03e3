//! The housing reaction `tau_support` of every gear-like FMU through the C ABI: the moment
//! balance about the shaft axis, external torques + tau_support = dL/dt, with the angular
//! momentum L taken from the speed outputs and differentiated over tiny steps (not from the
//! FMUs' accelerations), in transients, in steady motion, with losses and while stuck.

use fmu_harness::{Fmu, Instance, OK};

const H: f64 = 1e-3;
/// Tiny steps for the derivative of the angular momentum.
const TINY: f64 = 1e-7;

/// One FMU's balance: its external torque inputs, and its angular momentum as (inertia
/// parameter, speed output) pairs.
struct Balance {
    model: &'static str,
    torques: &'static [&'static str],
    momentum: &'static [(&'static str, &'static str)],
    /// Torque outputs that act on the component (a coupling's shafts are not in it).
    torque_outputs: &'static [&'static str],
}

const GEAR: Balance = Balance {
    model: "Gear",
    torques: &["tau_a", "tau_b"],
    momentum: &[("J_a", "w_a"), ("J_b", "w_b")],
    torque_outputs: &[],
};
const LOSSY_GEAR: Balance = Balance {
    model: "LossyGear",
    torques: &["tau_a", "tau_b"],
    momentum: &[("J_a", "w_a"), ("J_b", "w_b")],
    torque_outputs: &[],
};
const TRANSMISSION: Balance = Balance {
    model: "VariableRatioTransmission",
    torques: &["tau_B_ext", "tau_F_ext"],
    momentum: &[("J_B", "w_B"), ("J_F", "w_F")],
    torque_outputs: &[],
};
const COUPLING: Balance = Balance {
    model: "VariableRatioCoupling",
    torques: &[],
    momentum: &[],
    torque_outputs: &["tau_B", "tau_F"],
};
const CVT: Balance = Balance {
    model: "CVT",
    torques: &["tau_1", "tau_2"],
    momentum: &[("J1", "w1"), ("J2", "w2")],
    torque_outputs: &[],
};

impl Balance {
    /// The residual of the balance now, relative to the largest torque in it. Takes three tiny
    /// steps from `t` (inputs held) and differentiates L by a third-order one-sided difference.
    fn residual(&self, inst: &Instance, t: f64) -> f64 {
        let momentum = |i: &Instance| {
            self.momentum
                .iter()
                .map(|(j, w)| i.real(j) * i.real(w))
                .sum::<f64>()
        };
        let external: f64 = self
            .torques
            .iter()
            .chain(self.torque_outputs)
            .map(|n| inst.real(n))
            .sum();
        let support = inst.real("tau_support");
        let mut l = [momentum(inst), 0.0, 0.0, 0.0];
        for (k, l) in l.iter_mut().enumerate().skip(1) {
            let s = t + (k - 1) as f64 * TINY;
            assert_eq!(inst.do_step(s, TINY), OK, "{}", inst.log_text());
            *l = momentum(inst);
        }
        let rate = (-11.0 * l[0] + 18.0 * l[1] - 9.0 * l[2] + 2.0 * l[3]) / (6.0 * TINY);
        // The difference of L over 1e-7 s carries rounding of about 2e-9 |L| per second:
        // judged against torques of at least |L| per 100 s.
        let scale = external
            .abs()
            .max(support.abs())
            .max(rate.abs())
            .max(1e-2 * l[0].abs())
            .max(1e-3);
        (external + support - rate).abs() / scale
    }
}

/// Runs `steps` steps of H from `t` with inputs from `set`, checking the balance before every
/// step; returns the time reached and the largest residual.
fn run(
    b: &Balance,
    inst: &Instance,
    mut t: f64,
    steps: usize,
    set: &dyn Fn(&Instance, f64),
) -> (f64, f64) {
    let mut worst = 0.0f64;
    for _ in 0..steps {
        set(inst, t);
        let r = b.residual(inst, t);
        assert!(r < 1e-6, "{} at t = {t}: residual {r:.2e}", b.model);
        worst = worst.max(r);
        t += 3.0 * TINY;
        assert_eq!(inst.do_step(t, H), OK, "{}", inst.log_text());
        t += H;
    }
    (t, worst)
}

fn start<'a>(fmu: &'a Fmu, params: &[(&str, f64)]) -> Instance<'a> {
    let inst = fmu.instantiate("support");
    inst.initialize(0.0, None, params);
    inst
}

fn report(model: &str, worst: f64) {
    eprintln!("{model}: moment balance within {worst:.1e}");
}

#[test]
fn gear_support_balances_the_flanges_and_the_inertias() {
    let fmu = Fmu::load(GEAR.model);
    let inst = start(&fmu, &[("ratio", 3.0), ("J_a", 0.05), ("J_b", 0.4)]);
    let (t, transient) = run(&GEAR, &inst, 0.0, 400, &|i, t| {
        i.set("tau_a", 2.0 * (5.0 * t).sin());
        i.set("tau_b", -1.0 + 0.5 * (3.0 * t).cos());
    });
    // Steady rotation: no torque, no reaction.
    let (_, steady) = run(&GEAR, &inst, t, 100, &|i, _| {
        i.set("tau_a", 0.0);
        i.set("tau_b", 0.0);
    });
    assert!(inst.real("w_b").abs() > 0.1, "it must turn");
    assert!(inst.real("tau_support").abs() < 1e-12);
    report(GEAR.model, transient.max(steady));
    // Equal and opposite reactions at rest: ratio 1 passes the torque straight through.
    let through = start(&fmu, &[("ratio", 1.0), ("w_b_start", 0.0)]);
    through.set("tau_a", 2.0);
    through.set("tau_b", -2.0);
    assert_eq!(through.real("tau_support"), 0.0);
    // A reversing gear held at rest: ratio -1 doubles the reaction, tau_a = -tau_b / ratio.
    let reverse = start(&fmu, &[("ratio", -1.0), ("w_b_start", 0.0)]);
    reverse.set("tau_a", 2.0);
    reverse.set("tau_b", 2.0);
    assert!(reverse.real("a_b").abs() < 1e-12);
    assert!((reverse.real("tau_support") + 4.0).abs() < 1e-12);
}

#[test]
fn lossy_gear_support_balances_rolling_with_losses_and_stuck() {
    let fmu = Fmu::load(LOSSY_GEAR.model);
    let inst = start(&fmu, &[("ratio", 2.5), ("J_a", 0.01), ("J_b", 0.03)]);
    // Rolling with losses, then a load that stops it, then stuck under torques inside the band.
    let (t, rolling) = run(&LOSSY_GEAR, &inst, 0.0, 300, &|i, t| {
        i.set("tau_a", 0.5 * (4.0 * t).sin());
        i.set("tau_b", 0.2);
    });
    let (t, stopping) = run(&LOSSY_GEAR, &inst, t, 500, &|i, _| {
        i.set("tau_a", 0.0);
        i.set("tau_b", -2.0);
    });
    assert!(!inst.event_times().is_empty(), "it must stop");
    assert_eq!(inst.int("mode"), 0, "stuck");
    let (_, stuck) = run(&LOSSY_GEAR, &inst, t, 100, &|i, _| {
        i.set("tau_a", 0.3);
        i.set("tau_b", -0.1);
    });
    assert_eq!(inst.int("mode"), 0, "still stuck");
    // Stuck, the housing holds what the flanges apply.
    assert!((inst.real("tau_support") + 0.2).abs() < 1e-12);
    report(LOSSY_GEAR.model, rolling.max(stopping).max(stuck));
}

#[test]
fn transmission_support_balances_spring_mesh_and_bearings() {
    let fmu = Fmu::load(TRANSMISSION.model);
    let inst = fmu.instantiate("support");
    assert_eq!(inst.setup_experiment(None, 0.0, None), OK);
    for (n, v) in [("eta", 0.9), ("mu_B", 0.002), ("mu_F", 0.004), ("k_v", 5.0)] {
        assert_eq!(inst.set(n, v), OK, "{n}");
    }
    assert_eq!(inst.set_int("losses", 1), OK);
    assert_eq!(inst.enter_initialization_mode(), OK);
    assert_eq!(inst.exit_initialization_mode(), OK, "{}", inst.log_text());
    let (_, worst) = run(&TRANSMISSION, &inst, 0.0, 300, &|i, t| {
        i.set("tau_B_ext", 0.3 + 0.2 * (6.0 * t).sin());
        i.set("tau_F_ext", -0.1);
        i.set("r", 0.8 + 0.5 * t);
    });
    report(TRANSMISSION.model, worst);
}

#[test]
fn coupling_support_balances_what_the_shafts_apply() {
    let fmu = Fmu::load(COUPLING.model);
    let inst = start(&fmu, &[]);
    let (_, worst) = run(&COUPLING, &inst, 0.0, 300, &|i, t| {
        i.set("w_B", 10.0 + 3.0 * (4.0 * t).sin());
        i.set("w_F", 8.0);
        i.set("r", 1.2);
    });
    report(COUPLING.model, worst);
}

#[test]
fn cvt_support_balances_the_shafts_while_the_ratio_moves_and_at_a_stop() {
    let fmu = Fmu::load(CVT.model);
    let inst = start(&fmu, &[("w1_start", 30.0)]);
    // The secondary sheave is pushed to its upper stop and held, then the spinning belt pulls it
    // back across its travel: the ratio changes under way, and dw2/dt has a term rho' v2 w1
    // (leaving it out makes the balance fail by 0.5 of the torques).
    let (_, worst) = run(&CVT, &inst, 0.0, 800, &|i, t| {
        i.set("tau_1", 2.0 + (3.0 * t).sin());
        i.set("tau_2", -3.0);
        i.set("F_1", 40.0);
        i.set("F_2", 1000.0);
    });
    assert!(
        inst.event_times().len() >= 2,
        "the run must hit a travel stop and leave it: {}",
        inst.log_text()
    );
    report(CVT.model, worst);
}
