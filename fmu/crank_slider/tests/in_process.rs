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

/// The one geometric condition, a rod longer than the crank (checked at the start), holds at
/// every crank angle: no motion reaches an invalid geometry. With the rod only 0.1 % longer
/// than the crank (the rod all but square to the stroke at 90 degrees), a driven crank turns
/// ten times through both dead centres with the piston inside its reach, a cos(phi) +-
/// sqrt(l^2 - a^2 sin^2) between l - a and l + a, and every output finite.
#[test]
fn every_crank_angle_has_a_valid_geometry() -> Result<(), String> {
    let (a, l) = (0.05, 0.05 * 1.001);
    let mut run = Run::<CrankSlider>::co_simulation(&[
        ("crank_radius", a),
        ("rod_length", l),
        ("w_start", 50.0),
    ])?;
    run.set("tau", 1.0)?;
    while run.get("phi")? < 20.0 * std::f64::consts::PI {
        run.step(1e-3)?;
        let s = run.get("s")?;
        assert!(
            s >= l - a - 1e-12 && s <= l + a + 1e-12,
            "t = {}: piston at {s} m, outside [{}, {}]",
            run.time(),
            l - a,
            l + a
        );
        for name in ["w", "v", "a_s", "ds_dphi", "tau_rod"] {
            assert!(run.get(name)?.is_finite(), "t = {}: {name}", run.time());
        }
        assert!(run.time() < 10.0, "the crank does not turn");
    }
    Ok(())
}

/// A crank that starts exactly on a dead centre has passed none when it leaves it, whichever
/// way it leaves (moving backward, or at rest and pushed backward by the torque), and counts
/// the next dead centre, half a turn on, as its first.
#[test]
fn leaving_the_starting_dead_centre_is_not_a_passage() -> Result<(), String> {
    for (w_start, tau) in [(-10.0, 0.0), (0.0, -2.0), (10.0, 0.0), (0.0, 2.0)] {
        let mut run =
            Run::<CrankSlider>::co_simulation(&[("phi_start", 0.0), ("w_start", w_start)])?;
        run.set("tau", tau)?;
        // Bounded: a crank that stops short of 1.5 pi fails here instead of looping.
        while run.get("phi")?.abs() < 1.5 * std::f64::consts::PI {
            assert!(
                run.time() < 5.0,
                "w_start {w_start}, tau {tau}: phi = {} after 5 s, short of 1.5 pi",
                run.get("phi")?
            );
            run.step(1e-3)?;
            let phi = run.get("phi")?;
            let passed = if phi.abs() < std::f64::consts::PI {
                0.0
            } else {
                1.0
            };
            assert_eq!(
                run.get("dead_centre_count")?,
                passed,
                "w_start {w_start}, tau {tau}: t = {}, phi = {phi}",
                run.time()
            );
        }
    }
    Ok(())
}

/// A crank of zero radius is no crank: refused at the start, naming the parameter.
#[test]
fn a_crank_of_zero_radius_is_refused() {
    let error = Run::<CrankSlider>::co_simulation(&[("crank_radius", 0.0)])
        .err()
        .expect("refused");
    assert!(error.contains("crank_radius"), "{error}");
}

/// The exact Jacobian of the outputs and state derivatives by the states and inputs (tau, f)
/// agrees with differences of the mechanism's own equations: mid-stroke on either side of the
/// stroke, just past a dead centre (ds/dphi near 0) and with a rod barely longer than the
/// crank (R small, where d2s/dphi2 is steep).
#[test]
fn the_exact_jacobian_agrees_with_differences() -> Result<(), String> {
    for (phi_start, w_start, rod_length) in [
        (0.7, 12.0, 0.16),
        (4.1, -20.0, 0.16),
        (1e-3, 5.0, 0.16),
        (1.4, 3.0, 0.0505),
    ] {
        let mut run = Run::<CrankSlider>::co_simulation(&[
            ("phi_start", phi_start),
            ("w_start", w_start),
            ("rod_length", rod_length),
            ("m", 0.7),
        ])?;
        run.set("tau", 0.3)?;
        run.set("f", -25.0)?;
        for _ in 0..3 {
            run.step(1e-4)?;
        }
        let disagreements = run.jacobian_disagreements(1e-8)?;
        assert!(
            disagreements.is_empty(),
            "phi_start {phi_start}, w_start {w_start}, l {rod_length}: {disagreements:?}"
        );
    }
    Ok(())
}
