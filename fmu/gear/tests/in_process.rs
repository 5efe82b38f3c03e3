//! The Gear in its own process, without packaging: the closed-form motion under constant
//! torques from rest.

use fmu_runtime::testing::Run;
use gear::Gear;

/// (J_b + ratio^2 J_a) a_b = tau_b + ratio tau_a: with ratio 2, J_a = 0.1, J_b = 0.2,
/// tau_a = 0.5 and tau_b = 0.2, a_b = 1.2 / 0.6 = 2 rad/s^2; after 1 s from rest w_b = 2 rad/s,
/// phi_b = 1 rad, and flange a turns twice as far and fast.
#[test]
fn constant_torques_give_the_closed_form_motion() -> Result<(), String> {
    let mut run = Run::<Gear>::co_simulation(&[("ratio", 2.0), ("J_a", 0.1), ("J_b", 0.2)])?;
    run.set("tau_a", 0.5)?;
    run.set("tau_b", 0.2)?;
    for _ in 0..1000 {
        run.step(1e-3)?;
    }
    for (name, exact) in [
        ("phi_b", 1.0),
        ("w_b", 2.0),
        ("a_b", 2.0),
        ("phi_a", 2.0),
        ("w_a", 4.0),
    ] {
        let value = run.get(name)?;
        assert!(
            (value - exact).abs() < 1e-9,
            "{name} = {value}, exactly {exact}"
        );
    }
    Ok(())
}

/// A refused set says why, naming the variable: a NaN is not a number, an output is not
/// settable, a value out of range is out of it; and a refused set changes nothing.
#[test]
fn a_refused_set_names_the_variable_and_the_reason() -> Result<(), String> {
    let mut run = Run::<Gear>::co_simulation(&[])?;
    run.set("tau_a", 0.5)?;
    for (name, value, reason) in [
        (
            "tau_a",
            f64::NAN,
            "tau_a = NaN at t = 0 refused: not a finite number",
        ),
        (
            "w_a",
            1.0,
            "w_a is a continuous output variable and cannot be set",
        ),
        (
            "ratio",
            2.0,
            "ratio is a fixed parameter and cannot be set once initialization has ended",
        ),
    ] {
        let e = run.set(name, value).expect_err(name);
        assert!(e.contains(reason), "{name} = {value}: {e}");
    }
    assert_eq!(run.get("tau_a")?, 0.5);
    Ok(())
}

/// The exact Jacobian of the outputs and state derivatives by the states and inputs agrees
/// with differences of the gear's own equations, with a reversing ratio and torques applied.
#[test]
fn the_exact_jacobian_agrees_with_differences() -> Result<(), String> {
    let mut run = Run::<Gear>::co_simulation(&[("ratio", -1.7), ("J_a", 0.3), ("J_b", 0.05)])?;
    run.set("tau_a", 0.4)?;
    run.set("tau_b", -1.1)?;
    for _ in 0..10 {
        run.step(1e-3)?;
    }
    let disagreements = run.jacobian_disagreements(1e-8)?;
    assert!(disagreements.is_empty(), "{disagreements:?}");
    Ok(())
}
