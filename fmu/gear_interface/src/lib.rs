//! The interface the Gear and LossyGear FMUs share: a gear `phi_a = ratio phi_b` carrying an
//! inertia on each flange, driven by external torques on them. Declared once here and embedded
//! with `#[variables]`; each model adds what differs (its losses, its mesh torque's meaning, its
//! modes) and says what the accelerations depend on.

use fmu_runtime::{Invalid, Param, Scalar, Variables};

/// The shared parameters, the two torque inputs, and the angles, speeds and accelerations of
/// both flanges. The states are flange b's angle and speed. Generic over the number type of
/// the models that embed it (see `fmu_runtime::lift`).
#[derive(Debug, Clone, Variables)]
pub struct GearInterface<S: Scalar = f64> {
    #[parameter(describe = "Gear ratio phi_a/phi_b; non-zero, negative reverses the direction")]
    pub ratio: Param<S>,
    #[parameter(
        name = "J_a",
        unit = "kg.m2",
        min = 0.0,
        describe = "Inertia rigidly attached to flange a"
    )]
    pub j_a: Param<S>,
    #[parameter(
        name = "J_b",
        unit = "kg.m2",
        min = 0.0,
        describe = "Inertia rigidly attached to flange b"
    )]
    pub j_b: Param<S>,
    #[parameter(unit = "rad", describe = "Initial angle of flange b")]
    pub phi_b_start: Param<S>,
    #[parameter(unit = "rad/s", describe = "Initial speed of flange b")]
    pub w_b_start: Param<S>,
    #[input(
        unit = "N.m",
        describe = "External torque on the a-side inertia, positive in the positive direction of rotation"
    )]
    pub tau_a: S,
    #[input(
        unit = "N.m",
        describe = "External torque on the b-side inertia, positive in the positive direction of rotation"
    )]
    pub tau_b: S,
    #[output(unit = "rad", describe = "Angle of flange a", depends_on = ["phi_b"], initial_depends_on = ["ratio", "phi_b_start"])]
    pub phi_a: S,
    #[output(unit = "rad/s", describe = "Speed of flange a", depends_on = ["w_b"], initial_depends_on = ["ratio", "w_b_start"])]
    pub w_a: S,
    #[output(unit = "rad/s2", describe = "Acceleration of flange a")]
    pub a_a: S,
    #[output(unit = "rad", describe = "Angle of flange b (state)", depends_on = ["phi_b"], initial_depends_on = ["phi_b_start"],
             state, angle, from = phi_b_start, derivative = "w_b")]
    pub phi_b: S,
    #[output(unit = "rad/s", describe = "Speed of flange b (state)", depends_on = ["w_b"], initial_depends_on = ["w_b_start"],
             state, from = w_b_start, derivative = "a_b")]
    pub w_b: S,
    #[output(unit = "rad/s2", describe = "Acceleration of flange b")]
    pub a_b: S,
}

impl GearInterface {
    /// The interface with the given start values of its parameters: `ratio`, `J_a`, `J_b`,
    /// `phi_b_start`, `w_b_start`.
    pub fn with_parameters(
        ratio: f64,
        j_a: f64,
        j_b: f64,
        phi_b_start: f64,
        w_b_start: f64,
    ) -> Self {
        GearInterface {
            ratio,
            j_a,
            j_b,
            phi_b_start,
            w_b_start,
            ..Default::default()
        }
    }

    /// Checks the shared parameters and returns the inertia reflected to flange b,
    /// `J_b + ratio^2 J_a`, which must be positive: the gear must carry some inertia.
    pub fn reflected_inertia(&self) -> Result<f64, Invalid> {
        let (ratio, j_a, j_b) = (self.ratio, self.j_a, self.j_b);
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every start value given is the one the interface holds.
    #[test]
    fn the_start_values_given_are_kept() {
        let g = GearInterface::with_parameters(2.0, 0.1, 0.2, 0.3, 4.0);
        assert_eq!(
            (g.ratio, g.j_a, g.j_b, g.phi_b_start, g.w_b_start),
            (2.0, 0.1, 0.2, 0.3, 4.0)
        );
    }

    /// Each inertia must itself be finite and >= 0, even where the reflected inertia
    /// J_b + ratio^2 J_a would come out positive: a negative J_a stores negative energy.
    #[test]
    fn each_inertia_is_checked_on_its_own() {
        for (j_a, j_b, name) in [
            (-0.001, 0.01, "J_a"),
            (0.01, -0.001, "J_b"),
            (f64::INFINITY, 0.01, "J_a"),
            (0.01, f64::NAN, "J_b"),
        ] {
            let error = GearInterface::with_parameters(2.0, j_a, j_b, 0.0, 0.0)
                .reflected_inertia()
                .expect_err("refused");
            assert!(format!("{error:?}").contains(name), "{error:?}");
        }
        let ok = GearInterface::with_parameters(2.0, 0.0, 0.01, 0.0, 0.0).reflected_inertia();
        assert_eq!(ok.ok(), Some(0.01));
    }
}
