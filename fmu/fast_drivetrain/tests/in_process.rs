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

/// The two discs stand for the shafts (documentation, "Two discs"): disc B turns against disc
/// A, both disc angles are their speeds' integrals through a shift, and the transverse split
/// is the midpoint where both discs obey the triangle inequality Jyy <= 2 Jxx (the same
/// margin 2 Jxx - Jyy for both) while Jxx_a + Jxx_b = alpha, in every gear.
#[test]
fn the_two_discs_counter_rotate_and_split_the_transverse_inertia_at_the_midpoint(
) -> Result<(), String> {
    let mut run = Run::<FastDrivetrain>::co_simulation(&[])?;
    run.set("tau_eng", 30.0)?;
    let h = 1e-3;
    let mut theta_a = run.get("theta_a")?;
    for k in 0..600 {
        if k == 300 {
            run.set("gear", 3.0)?;
        }
        let w_before = run.get("w_a")?;
        run.step(h)?;
        let w_after = run.get("w_a")?;
        // Constant acceleration within a step: the angle grows by the mean speed times h.
        // The step of the shift starts from the new ratio's speed, w_a(t+) = rho_e' w_ds(t+).
        let w_start = if k == 300 {
            w_after - (run.get("rho_e")? * run.get("Q")? / run.get("delta")?) * h
        } else {
            w_before
        };
        theta_a += 0.5 * (w_start + w_after) * h;
        let (ta, tb) = (run.get("theta_a")?, run.get("theta_b")?);
        assert!(
            (ta - theta_a).abs() <= 1e-9 * (1.0 + ta.abs()),
            "t = {}: theta_a {ta}, integral {theta_a}",
            run.time()
        );
        assert_eq!(tb, -ta, "t = {}", run.time());
        assert_eq!(run.get("w_b")?, -run.get("w_a")?);
    }
    for gear in 1..=6 {
        let mut run = Run::<FastDrivetrain>::co_simulation(&[("gear", f64::from(gear))])?;
        run.step(h)?;
        let alpha = run.get("alpha")?;
        let (jxx_a, jxx_b) = (run.get("Jxx_a")?, run.get("Jxx_b")?);
        let (jyy_a, jyy_b) = (run.get("Jyy_a")?, run.get("Jyy_b")?);
        let (margin_a, margin_b) = (2.0 * jxx_a - jyy_a, 2.0 * jxx_b - jyy_b);
        assert!(
            (jxx_a + jxx_b - alpha).abs() <= 1e-15 * alpha,
            "gear {gear}"
        );
        assert!(
            margin_a >= 0.0 && margin_b >= 0.0,
            "gear {gear}: {margin_a}, {margin_b}"
        );
        assert!(
            (margin_a - margin_b).abs() <= 1e-12 * alpha,
            "gear {gear}: margins {margin_a} and {margin_b}"
        );
    }
    Ok(())
}

/// Shafts without mass (only inertias given) put the discs at the origin, not at 0/0.
#[test]
fn massless_shafts_put_the_discs_at_the_origin() -> Result<(), String> {
    let names = ["m[1]", "m[2]", "m[3]", "m[4]"];
    let params: Vec<(&str, f64)> = names.iter().map(|n| (*n, 0.0)).collect();
    let mut run = Run::<FastDrivetrain>::co_simulation(&params)?;
    run.step(1e-3)?;
    assert_eq!(run.get("hx_disc")?, 0.0);
    assert_eq!(run.get("hz_disc")?, 0.0);
    Ok(())
}

/// The shafts the FMU declares by default are the engine its documentation tabulates
/// (documentation.html, table "default-engine"): mass, inertias and position of each.
#[test]
fn the_default_engine_is_the_documented_one() -> Result<(), String> {
    let html = include_str!("../documentation.html");
    let start = html
        .find("<table id=\"default-engine\">")
        .expect("the table");
    let table = &html[start..start + html[start..].find("</table>").expect("its end")];
    let mut rows = 0;
    for row in table.split("<tr>").skip(2) {
        let cells: Vec<&str> = row
            .split("<td>")
            .skip(1)
            .map(|c| c.split("</td>").next().unwrap_or(""))
            .collect();
        let k = cells[0];
        for (name, cell) in ["m", "Jxx", "Jyy", "hx", "hz"].iter().zip(&cells[2..]) {
            let documented: f64 = cell.parse().map_err(|e| format!("{name}[{k}]: {e}"))?;
            let declared =
                Run::<FastDrivetrain>::co_simulation(&[])?.get(&format!("{name}[{k}]"))?;
            assert_eq!(declared, documented, "{name}[{k}]");
        }
        rows += 1;
    }
    assert_eq!(rows, 4);
    Ok(())
}

/// Coasting against the drag from a start speed, with no torque: the kinetic energy lost is the
/// energy the drag dissipated (the state `energy_damping`, the integral of d_spin w_ds^2).
#[test]
fn the_drag_dissipates_the_kinetic_energy_it_takes() -> Result<(), String> {
    let mut run = Run::<FastDrivetrain>::co_simulation(&[("d_spin", 0.05), ("w_ds_start", 80.0)])?;
    let e_start = run.get("E_kin")?;
    for _ in 0..1000 {
        run.step(1e-3)?;
    }
    let (e_kin, dissipated) = (run.get("E_kin")?, run.get("energy_damping")?);
    assert!(
        e_kin < 0.99 * e_start,
        "the drag slows the shafts: {e_kin} J of {e_start} J"
    );
    assert!(
        (e_start - e_kin - dissipated).abs() < 1e-8 * e_start,
        "lost {} J, dissipated {dissipated} J",
        e_start - e_kin
    );
    Ok(())
}

/// The exact Jacobian of the outputs and state derivatives by the states and inputs agrees
/// with differences of the model's own equations: spinning in a casing that turns about all
/// three axes, with drag and both torques, in the start gear and after shifts (a shift moves
/// the reduction and disc A's angle offset, which the next sweep takes from the f64 model).
/// Slow enough that the differences resolve dE_kin/d(omega_y) = J_pitch omega_y, a small
/// remainder of large terms.
#[test]
fn the_exact_jacobian_agrees_with_differences_in_every_gear_reached() -> Result<(), String> {
    let mut run = Run::<FastDrivetrain>::co_simulation(&[
        ("d_spin", 0.02),
        ("w_ds_start", 8.0),
        ("theta_ds_start", 0.3),
    ])?;
    run.set("tau_eng", 3.5)?;
    run.set("tau_ext", -1.2)?;
    for (name, w) in [("omega_x", 0.4), ("omega_y", -1.3), ("omega_z", 0.7)] {
        run.set(name, w)?;
    }
    for gear in [1, 3, 2, 6] {
        run.set("gear", f64::from(gear))?;
        for _ in 0..20 {
            run.step(1e-3)?;
        }
        assert_eq!(run.get("gear_engaged")?, f64::from(gear));
        let disagreements = run.jacobian_disagreements(1e-8)?;
        assert!(disagreements.is_empty(), "gear {gear}: {disagreements:?}");
    }
    Ok(())
}

/// With another crankshaft and sprocket shaft, five shafts and the drag off: the engine ratio
/// and the reduction are another gear's, the Jacobian still the equations'.
#[test]
fn the_exact_jacobian_agrees_with_differences_for_another_layout() -> Result<(), String> {
    let mut run = Run::<FastDrivetrain>::co_simulation(&[
        ("nShafts", 5.0),
        ("iCrank", 2.0),
        ("iSprocket", 5.0),
        ("m[5]", 1.2),
        ("Jxx[5]", 0.01),
        ("Jyy[5]", 0.004),
        ("hx[5]", 0.05),
        ("rho[1,1]", -1.5),
        ("rho[1,2]", 2.5),
        ("rho[1,3]", 0.8),
        ("rho[1,4]", -0.6),
        ("rho[1,5]", 1.0),
        ("nGears", 1.0),
    ])?;
    run.set("tau_eng", -20.0)?;
    run.set("omega_y", 2.0)?;
    run.set("omega_z", -0.5)?;
    for _ in 0..50 {
        run.step(1e-3)?;
    }
    let disagreements = run.jacobian_disagreements(1e-8)?;
    assert!(disagreements.is_empty(), "{disagreements:?}");
    Ok(())
}
