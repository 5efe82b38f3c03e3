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

/// The pulleys must stay apart, C > (D1 + D2)/2, wherever the sheaves can go: the start checks
/// it over the whole travel between the stops, and the stops keep the motion in that travel.
/// With C the smallest centre distance the start accepts (bisected to 1e-7 m), actuator forces
/// that slam the secondary sheave into each stop in turn never bring the pulleys together.
#[test]
fn the_pulleys_stay_apart_over_the_whole_travel() -> Result<(), String> {
    let (mut lo, mut hi) = (0.0, 0.25);
    assert!(Run::<Cvt>::co_simulation(&[("C", hi)]).is_ok());
    while hi - lo > 1e-7 {
        let mid = 0.5 * (lo + hi);
        match Run::<Cvt>::co_simulation(&[("C", mid)]) {
            Ok(_) => hi = mid,
            Err(e) => {
                assert!(e.contains("pulleys overlap"), "C = {mid}: {e}");
                lo = mid;
            }
        }
    }
    let c = hi;
    let mut run = Run::<Cvt>::co_simulation(&[("C", c)])?;
    let (s2_min, s2_max) = (run.get("s2_min")?, run.get("s2_max")?);
    let mut closest = f64::INFINITY;
    for k in 0..2000 {
        let f = if (k / 250) % 2 == 0 { 2000.0 } else { -2000.0 };
        run.set("F_2", f)?;
        run.step(1e-3)?;
        let (d1, d2, s2) = (run.get("D1")?, run.get("D2")?, run.get("s2")?);
        assert!(
            c > 0.5 * (d1 + d2) && d1 > 0.0 && d2 > 0.0,
            "t = {}: C = {c} m, D1 = {d1} m, D2 = {d2} m",
            run.time()
        );
        assert!(s2 >= s2_min - 1e-12 && s2 <= s2_max + 1e-12, "s2 = {s2}");
        closest = closest.min(c - 0.5 * (d1 + d2));
    }
    // The stops were reached: the pulleys came within the bisection's resolution of touching.
    assert!(
        closest < 1e-6,
        "the pulleys kept {closest} m apart: the travel was not swept"
    );
    Ok(())
}
