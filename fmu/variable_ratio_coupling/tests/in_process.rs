//! The VariableRatioCoupling in its own process, without packaging: shaft speeds in, torques
//! out. With the base at rest and the follower at 1 rad/s through ratio 2 the compliance winds
//! up at dphi/dt = r w_F = 2 rad/s, and without losses the torques follow in closed form:
//! tau_B = -k_p phi - k_v dphi/dt, tau_F = -r tau_B, dissipation k_v (dphi/dt)^2.

use fmu_runtime::testing::Run;
use variable_ratio_coupling::VariableRatioCoupling as Vrc;

#[test]
fn a_constant_speed_difference_winds_up_the_compliance() -> Result<(), String> {
    let (k_p, k_v, r) = (30000.0, 0.05, 2.0);
    let mut run = Run::<Vrc>::co_simulation(&[])?;
    run.set("w_B", 0.0)?;
    run.set("w_F", 1.0)?;
    run.set("r", r)?;
    for _ in 0..100 {
        run.step(1e-3)?;
    }
    let t = run.time();
    let phi = r * t;
    let tau_b = -k_p * phi - k_v * r;
    for (name, exact) in [
        ("phi", phi),
        ("phi_dot", r),
        ("tau_B", tau_b),
        ("tau_F", -r * tau_b),
        ("power_loss", k_v * r * r),
        ("energy_loss", k_v * r * r * t),
    ] {
        let value = run.get(name)?;
        assert!(
            (value - exact).abs() < 1e-9 * exact.abs().max(1.0),
            "{name} = {value}, exactly {exact}"
        );
    }
    Ok(())
}

/// The power flow starts in the direction the start values give: forward (+1) when the base
/// feeds the spring, reverse (-1) when the follower does. At rest with the spring preloaded by
/// tau_B_start and the shafts turning together (dphi/dt = r w_F - w_B = 0), the base puts in
/// tau_B w_B: forward for tau_B_start w_B > 0, reverse for tau_B_start w_B < 0.
#[test]
fn the_power_flow_starts_the_way_the_start_values_drive_it() -> Result<(), String> {
    for (tau_b_start, w_b, flow) in [(2.0, 1.0, 1.0), (-2.0, 1.0, -1.0), (2.0, -1.0, -1.0)] {
        let r = 2.0;
        let run = &mut Run::<Vrc>::co_simulation(&[
            ("tau_B_start", tau_b_start),
            ("w_B", w_b),
            ("w_F", w_b / r),
            ("r", r),
        ])?;
        assert_eq!(
            run.get("power_flow")?,
            flow,
            "tau_B_start {tau_b_start}, w_B {w_b}"
        );
        assert!((run.get("tau_B")? - tau_b_start).abs() < 1e-12);
    }
    Ok(())
}

/// A ratio that is not positive, reached during the run, is refused naming r and its value:
/// by fmi2SetReal where it leaves the declared range (r < 0, NaN), by the next step where the
/// range admits it (r = 0, the range's bound, which no transmission has).
#[test]
fn a_ratio_reached_during_the_run_is_checked() -> Result<(), String> {
    for r in [0.0, -1.5, f64::NAN] {
        let mut run = Run::<Vrc>::co_simulation(&[("w_F", 1.0)])?;
        run.step(1e-3)?;
        let error = match run.set("r", r) {
            Err(error) => error,
            Ok(()) => run.step(1e-3).expect_err("refused"),
        };
        assert!(error.contains(&format!("r = {r}")), "{error}");
    }
    Ok(())
}

/// The efficiency is a fraction in (0, 1]: 0, negative, above 1 or NaN is refused naming eta.
#[test]
fn an_efficiency_outside_zero_one_is_refused() {
    for eta in [0.0, -0.5, 1.5, f64::NAN] {
        let error = Run::<Vrc>::co_simulation(&[("eta", eta)])
            .err()
            .expect("refused");
        assert!(error.contains("eta"), "eta {eta}: {error}");
    }
}

/// The exact Jacobian of the torques, the losses and the state derivatives by the states and
/// inputs (w_B, w_F, r) agrees with differences of the coupling's own equations: without
/// losses, and with them in both directions, forward and reverse flow, the follower speed
/// inside the regularization (|w_F| < w_th) and above it. A soft spring (k_p = 300) keeps the
/// mesh torque's sign over the differences' steps in phi.
#[test]
fn the_exact_jacobian_agrees_with_differences() -> Result<(), String> {
    for (losses, direction, tau_b_start, w_b, w_f, r) in [
        (0.0, 1.0, 5.0, 3.0, 1.0, 2.0),
        (1.0, 1.0, 5.0, 2.0, 0.3, 1.5),
        (1.0, -1.0, -5.0, 2.0, -0.3, 0.7),
        (1.0, 1.0, -5.0, 4.0, 2.5, 1.2),
    ] {
        let mut run = Run::<Vrc>::co_simulation(&[
            ("k_p", 300.0),
            ("k_v", 0.2),
            ("losses", losses),
            ("direction", direction),
            ("eta", 0.9),
            ("mu_B", 1e-3),
            ("mu_F", 2e-3),
            ("tau_B_start", tau_b_start),
            ("w_B", w_b),
            ("w_F", w_f),
            ("r", r),
        ])?;
        for _ in 0..3 {
            run.step(1e-4)?;
        }
        let disagreements = run.jacobian_disagreements(1e-8)?;
        assert!(
            disagreements.is_empty(),
            "losses {losses}, direction {direction}, tau_B_start {tau_b_start}, w_F {w_f}: \
             {disagreements:?}"
        );
    }
    Ok(())
}
