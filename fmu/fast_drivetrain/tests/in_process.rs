//! The FastDrivetrain in its own process, without packaging: in a casing that does not turn and
//! with no drag, the spin momentum grows as the generalized force's impulse,
//! p = (rho_eng tau_eng + tau_ext) t, and the kinetic energy is that force's work on theta_ds.

use fast_drivetrain::FastDrivetrain;
use fmu_runtime::testing::Run;

#[test]
fn a_constant_torque_spins_up_the_shafts_in_closed_form() -> Result<(), String> {
    let (tau_eng, tau_ext) = (40.0, -15.0);
    let mut run = Run::<FastDrivetrain>::co_simulation(&[("gear", 2.0)])?;
    run.set("gear", 2.0)?;
    run.set("tau_eng", tau_eng)?;
    run.set("tau_ext", tau_ext)?;
    for _ in 0..500 {
        run.step(1e-3)?;
    }
    let q = run.get("rho_eng")? * tau_eng + tau_ext;
    let t = run.time();
    let p = run.get("p")?;
    assert!(
        (p - q * t).abs() < 1e-12 * (q * t).abs(),
        "p = {p}, exactly {}",
        q * t
    );
    assert!((run.get("Q")? - q).abs() < 1e-12 * q.abs());
    let (e_kin, work) = (run.get("E_kin")?, q * run.get("theta_ds")?);
    assert!(
        (e_kin - work).abs() < 1e-8 * work,
        "E_kin = {e_kin}, work {work}"
    );
    // The spin inertia at the sprocket shaft: E_kin = p^2 / (2 delta).
    let delta = run.get("delta")?;
    assert!((e_kin - p * p / (2.0 * delta)).abs() < 1e-12 * e_kin);
    Ok(())
}
