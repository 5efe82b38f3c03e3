//! The CrankSlider in its own process, without packaging: with no torque and no piston force
//! its kinetic energy J w^2/2 + m v^2/2 is conserved while the speed varies with the
//! configuration, and every half turn passes a dead centre.

use crank_slider::CrankSlider;
use fmu_runtime::testing::Run;

#[test]
fn a_free_crank_keeps_its_energy_and_counts_its_dead_centres() -> Result<(), String> {
    let (j, m) = (0.02, 0.5);
    let mut run = Run::<CrankSlider>::co_simulation(&[("w_start", 30.0), ("J", j), ("m", m)])?;
    let energy = |run: &mut Run<CrankSlider>| -> Result<f64, String> {
        let (w, v) = (run.get("w")?, run.get("v")?);
        Ok(0.5 * j * w * w + 0.5 * m * v * v)
    };
    let e0 = energy(&mut run)?;
    let (mut slowest, mut fastest) = (f64::INFINITY, 0.0f64);
    for _ in 0..1000 {
        run.step(1e-3)?;
        let w = run.get("w")?;
        (slowest, fastest) = (slowest.min(w), fastest.max(w));
        let e = energy(&mut run)?;
        assert!(
            (e - e0).abs() < 1e-6 * e0,
            "t = {}: energy {e}, at the start {e0}",
            run.time()
        );
    }
    // The piston's inertia takes speed at mid-stroke: the energy is not all the crank's.
    assert!(
        fastest - slowest > 0.1,
        "speed between {slowest} and {fastest}"
    );
    let phi = run.get("phi")?;
    let passages = (phi / std::f64::consts::PI).floor();
    assert_eq!(run.get("dead_centre_count")?, passages, "phi = {phi}");
    Ok(())
}
