//! The ChainDrive in its own process, without packaging: with the engine pulling, a road load
//! and the brake on, the work of the engine and the road (torque times angle turned) equals the
//! change of kinetic, gravitational, suspension and chain energy plus what friction, damping,
//! the brake and impacts dissipated, in the full and the inextensible chain models.

use chain_drive::{ChainDrive, FULL, INEXTENSIBLE};
use fmu_runtime::testing::Run;

fn stored(run: &mut Run<ChainDrive>) -> Result<f64, String> {
    let mut e = 0.0;
    for name in [
        "energy_kinetic",
        "energy_gravity",
        "energy_suspension",
        "energy_chain",
        "energy_dissipated",
    ] {
        e += run.get(name)?;
    }
    Ok(e)
}

#[test]
fn the_work_of_engine_and_road_is_stored_or_dissipated() -> Result<(), String> {
    let (tau_eng, tau_load) = (60.0, -20.0);
    for model in [FULL, INEXTENSIBLE] {
        let mut run = Run::<ChainDrive>::co_simulation(&[("chain_model", f64::from(model))])?;
        run.set("tau_eng", tau_eng)?;
        run.set("tau_load", tau_load)?;
        run.set("c_brake", 0.05)?;
        let (e0, ds0, wheel0) = (
            stored(&mut run)?,
            run.get("theta_ds")?,
            run.get("theta_wheel")?,
        );
        for _ in 0..300 {
            run.step(1e-3)?;
        }
        let work =
            tau_eng * (run.get("theta_ds")? - ds0) + tau_load * (run.get("theta_wheel")? - wheel0);
        let change = stored(&mut run)? - e0;
        assert!(
            (change - work).abs() < 1e-6 * work.abs(),
            "chain model {model}: work {work} J, stored + dissipated {change} J"
        );
    }
    Ok(())
}
