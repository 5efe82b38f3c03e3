//! The ChainDrive in its own process, without packaging: with the engine pulling, a road load
//! and the brake on, the work of the engine and the road (torque times angle turned) equals the
//! change of kinetic, gravitational, suspension and chain energy plus what friction, damping,
//! the brake and impacts dissipated, in the full and the inextensible chain models.

use chain_drive::{ChainDrive, FULL, INEXTENSIBLE, QSS};
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
