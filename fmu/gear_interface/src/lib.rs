//! The interface the Gear and LossyGear FMUs share: a gear `phi_a = ratio phi_b` carrying an
//! inertia on each flange, driven by external torques on them. Declared once here; each model
//! adds what differs (its losses, its mesh torque's meaning, its modes).

/// The shared variables, for a model with the fields `ratio, j_a, j_b, phi_b_start,
/// w_b_start, tau_a, tau_b, phi_a, w_a, a_a, phi_b, w_b, a_b`: the parameters, the two torque
/// inputs and the angles, speeds and accelerations of both flanges.
///
/// `$dynamic`: what the accelerations depend on while stepping; `$initial`: an
/// `Option<&[&str]>` of what they depend on at initialization (None: everything, as FMI
/// assumes when a model says nothing).
#[macro_export]
macro_rules! gear_interface {
    ($dynamic:expr, $initial:expr) => {{
        use fmu_runtime::{real, Var};
        let initial: Option<&'static [&'static str]> = $initial;
        let accelerate = |v: Var<Self>| match initial {
            Some(d) => v.depends_on($dynamic).initial_depends_on(d),
            None => v.depends_on($dynamic),
        };
        vec![
            Var::parameter("ratio", real!(ratio))
                .describe("Gear ratio phi_a/phi_b; non-zero, negative reverses the direction"),
            Var::parameter("J_a", real!(j_a))
                .unit("kg.m2")
                .min(0.0)
                .describe("Inertia rigidly attached to flange a"),
            Var::parameter("J_b", real!(j_b))
                .unit("kg.m2")
                .min(0.0)
                .describe("Inertia rigidly attached to flange b"),
            Var::parameter("phi_b_start", real!(phi_b_start))
                .unit("rad")
                .describe("Initial angle of flange b"),
            Var::parameter("w_b_start", real!(w_b_start))
                .unit("rad/s")
                .describe("Initial speed of flange b"),
            Var::input("tau_a", real!(tau_a))
                .unit("N.m")
                .describe("External torque on the a-side inertia, positive in the positive direction of rotation"),
            Var::input("tau_b", real!(tau_b))
                .unit("N.m")
                .describe("External torque on the b-side inertia, positive in the positive direction of rotation"),
            Var::output("phi_a", real!(phi_a))
                .unit("rad")
                .describe("Angle of flange a")
                .depends_on(&["phi_b"])
                .initial_depends_on(&["ratio", "phi_b_start"]),
            Var::output("w_a", real!(w_a))
                .unit("rad/s")
                .describe("Speed of flange a")
                .depends_on(&["w_b"])
                .initial_depends_on(&["ratio", "w_b_start"]),
            accelerate(
                Var::output("a_a", real!(a_a))
                    .unit("rad/s2")
                    .describe("Acceleration of flange a"),
            ),
            Var::output("phi_b", real!(phi_b))
                .unit("rad")
                .describe("Angle of flange b (state)")
                .depends_on(&["phi_b"])
                .initial_depends_on(&["phi_b_start"]),
            Var::output("w_b", real!(w_b))
                .unit("rad/s")
                .describe("Speed of flange b (state)")
                .derivative_of("phi_b")
                .depends_on(&["w_b"])
                .initial_depends_on(&["w_b_start"]),
            accelerate(
                Var::output("a_b", real!(a_b))
                    .unit("rad/s2")
                    .describe("Acceleration of flange b")
                    .derivative_of("w_b"),
            ),
        ]
    }};
}

use fmu_runtime::Invalid;

/// Checks the shared parameters and returns the inertia reflected to flange b,
/// `J_b + ratio^2 J_a`, which must be positive: the gear must carry some inertia.
pub fn reflected_inertia(ratio: f64, j_a: f64, j_b: f64) -> Result<f64, Invalid> {
    if !(ratio.is_finite() && ratio != 0.0) {
        return Err(Invalid::new("ratio", ratio, "must be finite and non-zero"));
    }
    for (name, j) in [("J_a", j_a), ("J_b", j_b)] {
        if !(j.is_finite() && j >= 0.0) {
            return Err(Invalid::new(name, j, "must be finite and >= 0"));
        }
    }
    let j = j_b + ratio * ratio * j_a;
    if !(j > 0.0 && j.is_finite()) {
        return Err(Invalid::new(
            "J_reflected",
            j,
            "J_b + ratio^2 J_a must be positive and finite",
        ));
    }
    Ok(j)
}
