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

/// Gentler sheaves than the default c1 = c2 = 4 for the comparison with differences: these step
/// s2 by 1 mm (1e-3 of max(|s2|, 1)), and with the default the ratio changes by a third over
/// the 12 mm travel, where Richardson's error reaches 1e-5 of an entry; here it stays far
/// below 1e-8. The default geometry is checked against closed forms below.
const GENTLE: [(&str, f64); 2] = [("c1", 0.8), ("c2", 0.6)];

/// The parameters `extra` after [`GENTLE`].
fn gentle(extra: &[(&'static str, f64)]) -> Vec<(&'static str, f64)> {
    GENTLE.iter().chain(extra).copied().collect()
}

/// The exact Jacobian of the outputs and state derivatives by the states and inputs (one
/// sweep of the equations over jets) agrees with differences of the CVT's own f64 equations.
fn assert_exact_jacobian(run: &mut Run<Cvt>, what: &str) -> Result<(), String> {
    let disagreements = run.jacobian_disagreements(1e-8)?;
    assert!(
        disagreements.is_empty(),
        "{what}, t = {}: {disagreements:?}",
        run.time()
    );
    Ok(())
}

/// Free sheaves moving along the belt, both shafts turning, every input non-zero, off the
/// reference configuration (s1_bar, s2_bar not 0, c1 != c2).
#[test]
fn the_exact_jacobian_agrees_with_differences_with_free_sheaves() -> Result<(), String> {
    let mut run = Run::<Cvt>::co_simulation(&gentle(&[
        ("s1_bar", 0.001),
        ("s2_bar", -0.0005),
        ("w1_start", 10.0),
        ("s2_start", 0.002),
        ("v2_start", -0.01),
    ]))?;
    for (name, value) in [("tau_1", 2.0), ("tau_2", -0.5), ("F_1", 30.0)] {
        run.set(name, value)?;
    }
    // a2 is linear in F_2: the F_2 that gives the sheaves 1 m/s^2, so that they stay free.
    run.set("F_2", 0.0)?;
    let a2 = run.get("a2")?;
    run.set("F_2", 1.0)?;
    let per_newton = run.get("a2")? - a2;
    run.set("F_2", (1.0 - a2) / per_newton)?;
    for _ in 0..20 {
        run.step(1e-3)?;
    }
    assert_eq!(run.get("sheave_mode")?, 0.0);
    assert!(run.get("v2")?.abs() > 1e-3, "the sheaves move");
    assert_exact_jacobian(&mut run, "free")
}

/// Held on each stop (pushed into it by F_2), the equations use v2 = 0 and a2 = 0; released,
/// free again with the energy of the impacts taken.
#[test]
fn the_exact_jacobian_agrees_with_differences_on_the_stops() -> Result<(), String> {
    let mut run = Run::<Cvt>::co_simulation(&gentle(&[("w1_start", 10.0)]))?;
    run.set("tau_1", 0.3)?;
    run.set("tau_2", -0.2)?;
    run.set("F_1", 5.0)?;
    for (f_2, mode) in [(2000.0, 1.0), (-2000.0, -1.0)] {
        run.set("F_2", f_2)?;
        for _ in 0..100 {
            run.step(1e-3)?;
        }
        assert_eq!(run.get("sheave_mode")?, mode, "F_2 = {f_2}");
        assert_exact_jacobian(&mut run, &format!("held at {mode}"))?;
    }
    run.set("F_2", 500.0)?;
    for _ in 0..5 {
        run.step(1e-3)?;
    }
    assert_eq!(run.get("sheave_mode")?, 0.0, "released");
    assert!(run.get("energy_impact")? > 0.0);
    assert_exact_jacobian(&mut run, "released")
}

/// A start on the upper stop heading into it, pressed into it: the sheaves are stopped there
/// (their energy taken) and held; after the start the energy taken is a constant of the
/// motion.
#[test]
fn the_exact_jacobian_agrees_with_differences_after_a_stop_at_the_start() -> Result<(), String> {
    let hi = Run::<Cvt>::co_simulation(&GENTLE)?.get("s2_hi")?;
    let mut run = Run::<Cvt>::co_simulation(&gentle(&[
        ("s2_start", hi),
        ("v2_start", 0.05),
        ("w1_start", 10.0),
        ("F_2", 2000.0),
    ]))?;
    assert_eq!(run.get("sheave_mode")?, 1.0);
    assert_eq!(run.get("v2")?, 0.0);
    assert!(run.get("energy_impact")? > 0.0);
    run.set("tau_1", 0.4)?;
    run.step(1e-3)?;
    assert_exact_jacobian(&mut run, "stopped at the start")
}

/// With the default sheaves (c1 = c2 = 4) on the upper stop, where the differences are too
/// coarse along s2, the s2 column against closed forms: s1 moves by ds1_ds2, the ratio
/// D2/D1 by (c2 D1 - c1 D2 s1')/D1^2. Every other entry agrees with the differences.
#[test]
fn the_exact_jacobian_along_s2_is_the_closed_form_with_the_default_sheaves() -> Result<(), String> {
    let hi = Run::<Cvt>::co_simulation(&[])?.get("s2_hi")?;
    let mut run = Run::<Cvt>::co_simulation(&[
        ("s2_start", hi),
        ("v2_start", 0.05),
        ("w1_start", 10.0),
        ("F_2", 2000.0),
    ])?;
    run.set("tau_1", 0.4)?;
    run.step(1e-3)?;
    let (d1, d2, s1p) = (run.get("D1")?, run.get("D2")?, run.get("ds1_ds2")?);
    let ratio_p = (4.0 * d1 - 4.0 * d2 * s1p) / (d1 * d1);
    let mut checked = 0;
    for (unknown, known, exact, differences) in run.jacobian_disagreements(1e-8)? {
        assert_eq!(
            known, "s2",
            "{unknown}: {exact} vs differences {differences}"
        );
        assert!(
            (exact - differences).abs() < 1e-4 * exact.abs(),
            "{unknown}: {exact} vs differences {differences}"
        );
        let closed = match unknown {
            "s1" => s1p,
            "ratio" => ratio_p,
            _ => continue,
        };
        assert!(
            (exact - closed).abs() < 1e-13 * closed.abs(),
            "{unknown}: {exact} vs the closed form {closed}"
        );
        checked += 1;
    }
    assert_eq!(
        checked, 2,
        "the coarse differences miss s1 and the ratio here"
    );
    Ok(())
}
