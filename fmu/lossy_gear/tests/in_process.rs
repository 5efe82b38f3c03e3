//! The LossyGear in its own process, without packaging: the seed's gear (LossyGearDemo3),
//! spinning at 10 rad/s with no torques, brakes on its losses and sticks. What it loses is
//! what it dissipates: kinetic energy + energy_loss stays at its start value, and at rest it
//! stays stuck at exactly zero speed.

use fmu_runtime::testing::Run;
use lossy_gear::{LossyGear, STUCK};

#[test]
fn the_coasting_gear_dissipates_its_kinetic_energy_and_sticks() -> Result<(), String> {
    let mut run = Run::<LossyGear>::co_simulation(&[])?;
    // (J_b + ratio^2 J_a) w_b^2 / 2 with the defaults J_a = J_b = 0.001, ratio 1, w_b = 10.
    let j = 0.001 + 0.001;
    let kinetic = |run: &mut Run<LossyGear>| -> Result<f64, String> {
        let w = run.get("w_b")?;
        Ok(0.5 * j * w * w)
    };
    let start = kinetic(&mut run)?;
    assert_eq!(start, 0.1);
    for _ in 0..200 {
        run.step(1e-3)?;
        let total = kinetic(&mut run)? + run.get("energy_loss")?;
        assert!(
            (total - start).abs() < 1e-9,
            "t = {}: kinetic + dissipated = {total}, started with {start}",
            run.time()
        );
    }
    assert_eq!(run.get("w_b")?, 0.0);
    assert_eq!(run.get("mode")?, f64::from(STUCK));
    Ok(())
}
