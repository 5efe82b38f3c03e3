//! The VariableRatioTransmission in its own process, without packaging. The transmission
//! passes on the power it takes but for what its spring holds (k_p phi^2 / 2) and what it
//! dissipates (energy_loss), whatever the ratio does: the work of the external torques equals
//! kinetic energy + spring energy + energy_loss, with and without the losses.

use fmu_runtime::testing::Run;
use fmu_runtime::Model;
use variable_ratio_transmission::VariableRatioTransmission as Vrt;

fn balance(parameters: &[(&str, f64)]) -> Result<(), String> {
    let (j_b, j_f, k_p) = (0.01, 0.02, 30000.0);
    let (tau_b, tau_f) = (1.5, -0.4);
    let mut run = Run::<Vrt>::co_simulation(parameters)?;
    run.set("tau_B_ext", tau_b)?;
    run.set("tau_F_ext", tau_f)?;
    let (phi_b0, phi_f0) = (run.get("phi_B")?, run.get("phi_F")?);
    for k in 0..400 {
        // A ratio that changes along the run: the spring's energy does not depend on it.
        run.set("r", 1.5 + 0.5 * (k as f64 * 1e-3 * 10.0).sin())?;
        run.step(1e-3)?;
        let work = tau_b * (run.get("phi_B")? - phi_b0) + tau_f * (run.get("phi_F")? - phi_f0);
        let (w_b, w_f, phi) = (run.get("w_B")?, run.get("w_F")?, run.get("phi")?);
        let energy = 0.5 * j_b * w_b * w_b
            + 0.5 * j_f * w_f * w_f
            + 0.5 * k_p * phi * phi
            + run.get("energy_loss")?;
        assert!(
            (energy - work).abs() < 1e-6 * work.abs().max(1e-3),
            "{parameters:?}, t = {}: work {work} J, stored + dissipated {energy} J",
            run.time()
        );
    }
    Ok(())
}

#[test]
fn the_work_of_the_torques_is_stored_or_dissipated() -> Result<(), String> {
    balance(&[])?;
    balance(&[("losses", 1.0), ("mu_B", 1e-3), ("mu_F", 2e-3)])
}

/// The inertias are positive and finite: zero, negative, infinite or NaN is refused naming
/// J_B or J_F.
#[test]
fn inertias_must_be_positive() {
    for name in ["J_B", "J_F"] {
        for j in [0.0, -0.01, f64::INFINITY, f64::NAN] {
            let error = Run::<Vrt>::co_simulation(&[(name, j)])
                .err()
                .expect("refused");
            assert!(error.contains(name), "{name} = {j}: {error}");
        }
    }
}

/// The power flow starts the way the start values drive it (see the coupling's test): the
/// spring preloaded by tau_B_start, both shafts turning together at w_B = r w_F; forward when
/// nothing flows.
#[test]
fn the_power_flow_starts_the_way_the_start_values_drive_it() -> Result<(), String> {
    // At rest without preload no power flows: the flow reads its declared start, forward.
    assert_eq!(Run::<Vrt>::co_simulation(&[])?.get("power_flow")?, 1.0);
    for (tau_b_start, w_b, flow) in [(2.0, 1.0, 1.0), (-2.0, 1.0, -1.0), (2.0, -1.0, -1.0)] {
        let r = 2.0;
        let run = &mut Run::<Vrt>::co_simulation(&[
            ("tau_B_start", tau_b_start),
            ("w_B_start", w_b),
            ("w_F_start", w_b / r),
            ("r", r),
        ])?;
        assert_eq!(
            run.get("power_flow")?,
            flow,
            "tau_B_start {tau_b_start}, w_B {w_b}"
        );
    }
    Ok(())
}

/// Stiff exactly when the overdamped compliance mode decays faster than 1e5 1/s. The mode:
/// J_e phi'' + k_v phi' + k_p phi = 0 with the inertias in series through the ratio,
/// J_e = J_B J_F / (J_F + r^2 J_B); its fast rate is lambda = 1e5 where
/// J_e lambda^2 - k_v lambda + k_p = 0, that is at k_v = J_e 1e5 + k_p / 1e5.
#[test]
fn stiff_when_the_compliance_decays_faster_than_1e5_per_second() -> Result<(), String> {
    let (j_b, j_f, k_p) = (0.01, 0.02, 30000.0);
    for r in [0.5, 2.0] {
        let j_e = j_b * j_f / (j_f + r * r * j_b);
        let k_v = j_e * 1e5 + k_p / 1e5;
        // 1e-4 either side: the slow root's share, k_p / (J_e lambda), is 7e-4 of lambda.
        for (factor, stiff) in [(0.9999, false), (1.0001, true)] {
            let run = Run::<Vrt>::co_simulation(&[("r", r), ("k_v", factor * k_v)])?;
            assert_eq!(run.model().stiff(), stiff, "r {r}, k_v {}", factor * k_v);
        }
    }
    // The defaults: a lightly damped 338 Hz oscillation, which any integrator must follow.
    assert!(!Run::<Vrt>::co_simulation(&[])?.model().stiff());
    Ok(())
}

/// The exact Jacobian of the accelerations, torques, losses and state derivatives by the
/// states and inputs (tau_B_ext, tau_F_ext, r) agrees with differences of the gearbox's own
/// equations: without losses, and with them in both directions, forward and reverse flow, the
/// follower speed inside the regularization (|w_F| < w_th) and above it. A soft spring
/// (k_p = 300) keeps the mesh torque's sign over the differences' steps in phi.
#[test]
fn the_exact_jacobian_agrees_with_differences() -> Result<(), String> {
    for (losses, direction, tau_b_start, w_b, w_f, r) in [
        (0.0, 1.0, 5.0, 3.0, 1.0, 2.0),
        (1.0, 1.0, 5.0, 2.0, 0.3, 1.5),
        (1.0, -1.0, -5.0, 2.0, -0.3, 0.7),
        (1.0, 1.0, -5.0, 4.0, 2.5, 1.2),
    ] {
        let mut run = Run::<Vrt>::co_simulation(&[
            ("k_p", 300.0),
            ("k_v", 0.2),
            ("losses", losses),
            ("direction", direction),
            ("eta", 0.9),
            ("mu_B", 1e-3),
            ("mu_F", 2e-3),
            ("tau_B_start", tau_b_start),
            ("w_B_start", w_b),
            ("w_F_start", w_f),
            ("r", r),
        ])?;
        run.set("tau_B_ext", 0.8)?;
        run.set("tau_F_ext", -0.3)?;
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
