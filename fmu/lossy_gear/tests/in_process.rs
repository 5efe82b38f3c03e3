//! The LossyGear in its own process, without packaging: the seed's gear (LossyGearDemo3),
//! spinning at 10 rad/s with no torques, brakes on its losses and sticks. What it loses is
//! what it dissipates: kinetic energy + energy_loss stays at its start value, and at rest it
//! stays stuck at exactly zero speed.

use fmu_runtime::testing::Run;
use lossy_gear::{LossyGear, BACKWARD, FORWARD, FREE, STUCK};

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

/// A geared (ratio 2.5) gear with a three-row loss table, breakpoints at 0, 5 and 10 rad/s of
/// |w_a|: its losses move with the speed within a segment.
fn three_rows(w_b_start: f64) -> Result<Run<LossyGear>, String> {
    Run::<LossyGear>::co_simulation(&[
        ("ratio", 2.5),
        ("J_a", 0.1),
        ("J_b", 0.2),
        ("w_b_start", w_b_start),
        ("nLossRows", 3.0),
        ("lossTable[1,1]", 0.0),
        ("lossTable[1,2]", 0.9),
        ("lossTable[1,3]", 0.85),
        ("lossTable[1,4]", 0.1),
        ("lossTable[1,5]", 0.15),
        ("lossTable[2,1]", 5.0),
        ("lossTable[2,2]", 0.8),
        ("lossTable[2,3]", 0.7),
        ("lossTable[2,4]", 0.2),
        ("lossTable[2,5]", 0.3),
        ("lossTable[3,1]", 10.0),
        ("lossTable[3,2]", 0.7),
        ("lossTable[3,3]", 0.6),
        ("lossTable[3,4]", 0.3),
        ("lossTable[3,5]", 0.4),
    ])
}

/// Sets the torques, steps 10 ms, checks the mode and that every entry of the exact Jacobian
/// agrees with differences of the gear's own equations.
fn agrees(mut run: Run<LossyGear>, tau_a: f64, tau_b: f64, mode: i32) -> Result<(), String> {
    run.set("tau_a", tau_a)?;
    run.set("tau_b", tau_b)?;
    for _ in 0..10 {
        run.step(1e-3)?;
    }
    assert_eq!(run.get("mode")?, f64::from(mode), "mode");
    let disagreements = run.jacobian_disagreements(1e-8)?;
    assert!(disagreements.is_empty(), "{disagreements:?}");
    Ok(())
}

/// Rolling forward in the middle segment (|w_a| about 7.5 rad/s): flange a drives (quadrant 1),
/// then flange b drives (quadrant 2).
#[test]
fn the_exact_jacobian_agrees_rolling_forward_either_side_driving() -> Result<(), String> {
    agrees(three_rows(3.0)?, 2.0, 0.0, FORWARD)?;
    agrees(three_rows(3.0)?, -0.5, 3.0, FORWARD)
}

/// Rolling backward in the first segment (|w_a| about 2.5 rad/s), either side driving.
#[test]
fn the_exact_jacobian_agrees_rolling_backward_either_side_driving() -> Result<(), String> {
    agrees(three_rows(-1.0)?, -2.0, 0.0, BACKWARD)?;
    agrees(three_rows(-1.0)?, 0.5, -3.0, BACKWARD)
}

/// Beyond the last breakpoint the table is extrapolated from its last two rows.
#[test]
fn the_exact_jacobian_agrees_beyond_the_table() -> Result<(), String> {
    agrees(three_rows(6.0)?, 1.0, 0.5, FORWARD)
}

/// Stuck at rest, the torques inside the friction band: the loss is the torque it holds.
#[test]
fn the_exact_jacobian_agrees_stuck() -> Result<(), String> {
    agrees(three_rows(0.0)?, 0.05, -0.1, STUCK)
}

/// An ideal table: free, no loss.
#[test]
fn the_exact_jacobian_agrees_free() -> Result<(), String> {
    let run = Run::<LossyGear>::co_simulation(&[
        ("ratio", -1.7),
        ("J_a", 0.3),
        ("J_b", 0.05),
        ("lossTable[1,2]", 1.0),
        ("lossTable[1,3]", 1.0),
        ("lossTable[1,4]", 0.0),
        ("lossTable[1,5]", 0.0),
    ])?;
    agrees(run, 0.4, -1.1, FREE)
}
