//! The VariableRatioTransmission in its own process, without packaging. The transmission
//! passes on the power it takes but for what its spring holds (k_p phi^2 / 2) and what it
//! dissipates (energy_loss), whatever the ratio does: the work of the external torques equals
//! kinetic energy + spring energy + energy_loss, with and without the losses.

use fmu_runtime::testing::Run;
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
