//! The ChainDrive in its own process, without packaging: with the engine pulling, a road load
//! and the brake on, the work of the engine and the road (torque times angle turned) equals the
//! change of kinetic, gravitational, suspension and chain energy plus what friction, damping,
//! the brake and impacts dissipated, in the full and the inextensible chain models.

use chain_drive::{ChainDrive, FREE, FULL, INEXTENSIBLE, LOWER, QSS, UPPER};
use fmu_runtime::testing::Run;
use fmu_runtime::Model;

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

/// The swing-arm angle in (0, `rest`) where the sprockets first touch: the centre distance
/// `|P - W(th)|`, `W = (-l_sa cos th, l_sa sin th)`, equals `r_ds + r_ws` (bisection on the
/// layout's own definition, not the model's code).
fn touching_angle(l_sa: f64, ds: (f64, f64), r: f64, rest: f64) -> f64 {
    let gap = |th: f64| {
        let (cx, cz) = (ds.0 + l_sa * th.cos(), ds.1 - l_sa * th.sin());
        (cx * cx + cz * cz).sqrt() - r
    };
    let (mut lo, mut hi) = (0.0, rest);
    assert!(
        gap(lo) > 0.0 && gap(hi) < 0.0,
        "no touch in (0, {rest}) rad"
    );
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if gap(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The drive sprocket placed where the arm's travel brings the wheel sprocket onto it: valid at
/// the start, the sprockets overlap on the way to the arm's rest. Full and inextensible chain:
/// the arm starts level (centres 0.22 m apart) and sinks to its rest at 0.4 rad. Quasi-steady
/// state (the arm's pose algebraic, at its rest from the start): rest at 0.15 rad, then a load
/// torque growing by 20 N.m per ms lifts the pose. Every model ends the run at the touching pose
/// with an error naming theta_sa there, the time inside the failed step and the reason; the
/// outputs before are finite and the arm short of the touch.
#[test]
fn sprockets_that_overlap_during_the_run_end_it_there() -> Result<(), String> {
    let (l_sa, ds, r_ds, r_ws) = (0.7, (-0.6, 0.2), 0.03, 0.08);
    let touch = touching_angle(l_sa, ds, r_ds + r_ws, 0.4);
    for (model, rest, load_rate) in [
        (FULL, 0.4, 0.0),
        (chain_drive::QSS, 0.15, 2e4),
        (INEXTENSIBLE, 0.4, 0.0),
    ] {
        let mut run = Run::<ChainDrive>::co_simulation(&[
            ("chain_model", f64::from(model)),
            ("ds_x", ds.0),
            ("ds_z", ds.1),
            ("theta_sa_ref", rest),
        ])?;
        let mut last = run.get("theta_sa")?;
        let error = loop {
            run.set("tau_load", load_rate * run.time())?;
            match run.step(1e-3) {
                Ok(()) => last = run.get("theta_sa")?,
                Err(e) => break e,
            }
            assert!(
                run.time() < 2.0,
                "chain model {model}: no overlap found by 2 s"
            );
        };
        assert!(
            last.is_finite() && last < touch,
            "model {model}: last theta_sa {last}"
        );
        assert!(
            error.contains("sprockets overlap"),
            "model {model}: {error}"
        );
        let at = error
            .split("theta_sa = ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|s| s.parse::<f64>().ok())
            .ok_or_else(|| format!("model {model}: no theta_sa in {error}"))?;
        let t = error
            .split("failed: t = ")
            .nth(1)
            .and_then(|s| s.split([':', ' ']).next())
            .and_then(|s| s.parse::<f64>().ok())
            .ok_or_else(|| format!("model {model}: no time in {error}"))?;
        if load_rate == 0.0 {
            // A motion of the states: located inside the step, at the touch.
            assert!(
                (at - touch).abs() < 1e-9 && t > run.time() && t <= run.time() + 1e-3,
                "model {model}: stopped at theta_sa = {at} (touch at {touch}), t = {t}, step from {}: {error}",
                run.time()
            );
        } else {
            // A held input that jumps at a communication point moves the algebraic pose at
            // once: the step fails at its start, past the touch.
            assert!(
                at > touch && t == run.time(),
                "model {model}: stopped at theta_sa = {at} (touch at {touch}), t = {t}, step from {}: {error}",
                run.time()
            );
        }
    }
    Ok(())
}

/// The full chain model is stiff where the chain's damping relaxes a taut run faster than
/// 1e5 1/s, and the runtime then integrates with BDF. The rate, c A M^-1 A^T, is about
/// c (r_ds^2/J_ds + r_ws^2/J_rw) ~ 0.2 c with Table 2.2: stiff at c_chain = 1e7 N.s/m, not at
/// the default damping or at 1e4. The quasi-steady and inextensible models have no chain
/// states and never are.
#[test]
fn stiff_only_where_chain_damping_is_fast() -> Result<(), String> {
    let stiff = |model: i32, c: f64| -> Result<bool, String> {
        let parameters = [("chain_model", f64::from(model)), ("c_chain", c)];
        Ok(Run::<ChainDrive>::co_simulation(&parameters)?
            .model()
            .stiff())
    };
    assert!(stiff(FULL, 1e7)?);
    assert!(!stiff(FULL, 1e4)?);
    assert!(!Run::<ChainDrive>::co_simulation(&[])?.model().stiff());
    for model in [QSS, INEXTENSIBLE] {
        assert!(!stiff(model, 1e7)?, "chain_model {model}");
    }
    Ok(())
}

/// The event log names the run that is taut: whenever chain_mode reads 1, -1, 0 or 2, the
/// model's description of the event says upper, lower, slack or both, in each chain model.
#[test]
fn the_event_log_names_the_taut_run() -> Result<(), String> {
    let words = [
        (1.0, "upper run taut"),
        (-1.0, "lower run taut"),
        (0.0, "chain slack"),
        (2.0, "both runs taut"),
    ];
    let mut seen = Vec::new();
    for model in [FULL, QSS, INEXTENSIBLE] {
        let mut run = Run::<ChainDrive>::co_simulation(&[("chain_model", f64::from(model))])?;
        // The engine pulls (upper run), then brakes against the rolling wheel (lower run).
        for (tau_eng, steps) in [(60.0, 200), (-60.0, 400)] {
            run.set("tau_eng", tau_eng)?;
            for _ in 0..steps {
                run.step(1e-3)?;
                let mode = run.get("chain_mode")?;
                let (_, words) = words.iter().find(|(m, _)| *m == mode).expect("a mode");
                let text = run.model().describe_event(run.time()).unwrap_or_default();
                assert!(text.starts_with(words), "chain_mode {mode}: {text}");
                if !seen.contains(&mode.to_bits()) {
                    seen.push(mode.to_bits());
                }
            }
        }
    }
    assert!(
        seen.contains(&1f64.to_bits()),
        "the upper run was never taut"
    );
    assert!(
        seen.contains(&(-1f64).to_bits()),
        "the lower run was never taut"
    );
    Ok(())
}

/// The exact Jacobian of the outputs and state derivatives by the states and inputs (one sweep
/// of the equations over jets) agrees with differences of the drive's own f64 equations, in
/// every chain model and each mode it passes through: the engine pulls (upper run taut), then
/// brakes against the rolling wheel (the chain goes slack, the lower run taut), with a road
/// load, the brake on, chain damping and the swing arm moving. The QSS points include the
/// swing-arm angle solved by Newton (its derivatives by the implicit function theorem), the
/// inextensible ones the sprocket on the taut run's constraint.
///
/// The full chain's entries agree to 1e-8, where the differences' steps (1e-3 of each angle,
/// at least 1e-3 rad) carry no run across its rest length: a run pulls only while stretched,
/// and the differences of the chain's energy and tensions across that kink are no derivative. The reduced models' differences carry rounding
/// that no step removes: the QSS model's Newton iteration restarts with each moved known and
/// its root differs in the last bits, and its sprocket angle sums run lengths over r_ds, 30
/// times its own size; the inextensible chain holds the taut run's extension at 0, the
/// rounding of lengths of 1 m. A difference quotient over the step `h = 1e-3 max(|known|, 1)`
/// then resolves no better than 1e-11 max(|value|, 1) / max(|known|, 1) (at QSS points,
/// differences over steps 100 times larger agree with the exact entries to 1e-9); a deviation
/// below that is the differences', while a wrong derivative is off by its own size.
fn near_kink(run: &mut Run<ChainDrive>) -> Result<bool, String> {
    // Run lengths move by r_ds, r_ws (0.03 m, 0.08 m) per radian of sprocket and wheel, and
    // by less than 0.1 m per radian of the swing arm.
    let reach = 1e-3
        * (0.03 * run.get("theta_ds")?.abs().max(1.0)
            + 0.08 * (run.get("theta_rw")?.abs().max(1.0) + run.get("theta_sa")?.abs().max(1.0))
            + 0.1);
    Ok(run.get("e_upper")?.abs() < reach || run.get("e_lower")?.abs() < reach)
}

#[test]
fn the_exact_jacobian_agrees_with_differences_in_every_chain_mode() -> Result<(), String> {
    for (model, modes) in [
        (FULL, &[UPPER, FREE, LOWER][..]),
        (QSS, &[UPPER, LOWER][..]),
        (INEXTENSIBLE, &[UPPER, FREE, LOWER][..]),
    ] {
        let mut run = Run::<ChainDrive>::co_simulation(&[
            ("chain_model", f64::from(model)),
            ("c_chain", 40.0),
            ("w_rw_start", 5.0),
            ("theta_sa_start", 0.05),
            ("slack", 0.02),
        ])?;
        run.set("tau_load", -15.0)?;
        run.set("c_brake", 0.05)?;
        let mut seen = Vec::new();
        for (tau_eng, steps) in [(60.0, 200), (-40.0, 400)] {
            run.set("tau_eng", tau_eng)?;
            for step in 1..=steps {
                run.step(1e-3)?;
                // Every 20th step, and the first step in each mode.
                let mode = run.get("chain_mode")? as i32;
                if step % 20 != 7 && seen.contains(&mode) || model == FULL && near_kink(&mut run)? {
                    continue;
                }
                seen.push(mode);
                let mut disagreements = run.jacobian_disagreements(1e-8)?;
                if model != FULL {
                    let mut beyond = Vec::new();
                    for d in disagreements {
                        let (value, known) = (run.get(d.0)?, run.get(d.1)?);
                        let resolution = 1e-11 * value.abs().max(1.0) / known.abs().max(1.0);
                        if (d.2 - d.3).abs() > resolution {
                            beyond.push(d);
                        }
                    }
                    disagreements = beyond;
                }
                assert!(
                    disagreements.is_empty(),
                    "chain model {model}, chain_mode {mode}, t = {}: {disagreements:?}",
                    run.time()
                );
            }
        }
        for mode in modes {
            assert!(
                seen.contains(mode),
                "chain model {model}: chain_mode {mode} never met, {seen:?}"
            );
        }
    }
    Ok(())
}
