//! The VariableRatioCoupling in its own process, without packaging: shaft speeds in, torques
//! out. With the base at rest and the follower at 1 rad/s through ratio 2 the compliance winds
//! up at dphi/dt = r w_F = 2 rad/s, and without losses the torques follow in closed form:
//! tau_B = -k_p phi - k_v dphi/dt, tau_F = -r tau_B, dissipation k_v (dphi/dt)^2.

use fmu_runtime::testing::Run;
use variable_ratio_coupling::VariableRatioCoupling as Vrc;

#[test]
fn a_constant_speed_difference_winds_up_the_compliance() -> Result<(), String> {
    let (k_p, k_v, r) = (30000.0, 0.05, 2.0);
    let mut run = Run::<Vrc>::co_simulation(&[])?;
    run.set("w_B", 0.0)?;
    run.set("w_F", 1.0)?;
    run.set("r", r)?;
    for _ in 0..100 {
        run.step(1e-3)?;
    }
    let t = run.time();
    let phi = r * t;
    let tau_b = -k_p * phi - k_v * r;
    for (name, exact) in [
        ("phi", phi),
        ("phi_dot", r),
        ("tau_B", tau_b),
        ("tau_F", -r * tau_b),
        ("power_loss", k_v * r * r),
        ("energy_loss", k_v * r * r * t),
    ] {
        let value = run.get(name)?;
        assert!(
            (value - exact).abs() < 1e-9 * exact.abs().max(1.0),
            "{name} = {value}, exactly {exact}"
        );
    }
    Ok(())
}
