//! The CVT in its own process, without packaging: the work of constant torques and sheave
//! forces, torque times angle and force times travel, goes into the kinetic energy of the
//! shafts and sheaves and into the impacts on the travel stops, and nowhere else.

use cvt::Cvt;
use fmu_runtime::testing::Run;

/// J1 w1^2/2 + J2 w2^2/2 + m1 v1^2/2 + m2 v2^2/2 with the default inertias and masses.
fn kinetic(run: &mut Run<Cvt>) -> Result<f64, String> {
    let mut e = 0.0;
    for (mass, speed) in [(0.01, "w1"), (0.02, "w2"), (0.5, "v1"), (0.8, "v2")] {
        let v = run.get(speed)?;
        e += 0.5 * mass * v * v;
    }
    Ok(e)
}

#[test]
fn the_work_of_the_inputs_is_kinetic_energy_and_impact_losses() -> Result<(), String> {
    let (tau_1, tau_2, f_1, f_2) = (2.0, -0.5, 30.0, -10.0);
    let mut run = Run::<Cvt>::co_simulation(&[])?;
    for (name, value) in [
        ("tau_1", tau_1),
        ("tau_2", tau_2),
        ("F_1", f_1),
        ("F_2", f_2),
    ] {
        run.set(name, value)?;
    }
    let at = |run: &mut Run<Cvt>| -> Result<[f64; 4], String> {
        Ok([
            run.get("phi1")?,
            run.get("phi2")?,
            run.get("s1")?,
            run.get("s2")?,
        ])
    };
    let x0 = at(&mut run)?;
    for _ in 0..500 {
        run.step(1e-3)?;
        let x = at(&mut run)?;
        let work = tau_1 * (x[0] - x0[0])
            + tau_2 * (x[1] - x0[1])
            + f_1 * (x[2] - x0[2])
            + f_2 * (x[3] - x0[3]);
        let energy = kinetic(&mut run)? + run.get("energy_impact")?;
        assert!(
            (energy - work).abs() < 1e-7 * work.abs().max(1.0),
            "t = {}: work {work} J, kinetic + impacts {energy} J",
            run.time()
        );
    }
    Ok(())
}
