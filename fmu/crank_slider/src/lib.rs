//! Crank-slider: a crank with inertia J turns a piston of mass m through a massless rod.
//!
//! Equations and derivation: `documentation.html` next to this file (it ships in the FMU).

use fmu_runtime::math::{cos, sin};
use fmu_runtime::{
    export_fmu, Equations, Experiment, Indicators, Invalid, Jet, Model, Param, Scalar, Side,
    Variables,
};

/// Hysteresis of the dead-centre indicator sin(phi) near phi = 0: sin(phi) is rounded to
/// about one ulp of phi, which grows with the turns (1.1e-13 at 628 rad), so the hysteresis is
/// this plus four ulp of phi ([`dead_centre_hysteresis`]).
const DEAD_CENTRE_HYSTERESIS: f64 = 1e-15;

/// The hysteresis of sin(phi) at `phi`: larger than its rounding at any angle.
fn dead_centre_hysteresis(phi: f64) -> f64 {
    DEAD_CENTRE_HYSTERESIS + 4.0 * f64::EPSILON * phi.abs()
}

/// Piston position from the crank axis, and its first two derivatives with respect to phi.
pub mod geometry {
    use fmu_runtime::dual::OfOne;
    use fmu_runtime::{Param, Scalar};

    /// `s`, `ds/dphi` and `d2s/dphi2` at one crank angle.
    #[derive(Debug, Clone, Copy)]
    pub struct Slider<S> {
        pub s: S,
        pub sp: S,
        pub spp: S,
    }

    /// With `R = sqrt(l^2 - a^2 sin(phi)^2)` (positive for l > a):
    /// - `s = a cos(phi) + R`,
    /// - `ds/dphi = -a sin(phi) - a^2 sin(phi) cos(phi) / R`,
    /// - `d2s/dphi2 = -a cos(phi) - a^2 cos(2 phi) / R - a^4 sin^2(phi) cos^2(phi) / R^3`;
    ///
    /// one `sin_cos` for all three (it is most of a derivative evaluation's cost).
    #[inline(always)]
    pub fn at<S: Scalar>(a: Param<S>, l: Param<S>, phi: S) -> Slider<S> {
        let (sn, cs) = phi.sin_cos();
        let a2 = a * a;
        let r = (l * l - a2 * sn * sn).sqrt();
        let sc = sn * cs;
        Slider {
            s: a * cs + r,
            sp: -a * sn - a2 * sc / r,
            spp: -a * cs - a2 * (cs * cs - sn * sn) / r - a2 * a2 * sc * sc / (r * r * r),
        }
    }

    /// The crank and rod lengths: the geometry as a function of the crank angle alone, which
    /// the exact derivatives carry along one direction ([`Scalar::of_one`]).
    pub struct Crank<P> {
        pub a: P,
        pub l: P,
    }

    impl<P: Copy> OfOne<P, 3> for Crank<P> {
        #[inline(always)]
        fn at<T: Scalar<P = P>>(&self, phi: T) -> [T; 3] {
            let g = at::<T>(self.a, self.l, phi);
            [g.s, g.sp, g.spp]
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn derivatives_match_finite_differences() {
            let (a, l) = (0.05, 0.16);
            let h = 1e-5;
            for k in 0..720 {
                let phi = -7.0 + k as f64 * 0.0199;
                let (up, here, down) = (at(a, l, phi + h), at(a, l, phi), at(a, l, phi - h));
                let fd1 = (up.s - down.s) / (2.0 * h);
                let fd2 = (up.sp - down.sp) / (2.0 * h);
                assert!((fd1 - here.sp).abs() < 1e-10, "phi = {phi}");
                assert!((fd2 - here.spp).abs() < 1e-9, "phi = {phi}");
            }
        }

        #[test]
        fn seed_formula_is_not_the_piston_position() {
            // The seed prints s = a + l - sqrt(l^2 - a^2 sin^2) + a cos. At phi = pi/2 the
            // piston is sqrt(l^2 - a^2) from the crank axis; the seed says a + l - sqrt(...).
            let (a, l) = (0.05f64, 0.16f64);
            let phi = std::f64::consts::FRAC_PI_2;
            let seed = a + l - (l * l - a * a).sqrt() + a * fmu_runtime::math::cos(phi);
            let s = |phi: f64| at(a, l, phi).s;
            assert!((s(phi) - (l * l - a * a).sqrt()).abs() < 1e-15);
            assert!((seed - s(phi)).abs() > 0.05);
            // At the dead centres the position is l + a and l - a.
            assert!((s(0.0) - (l + a)).abs() < 1e-15);
            assert!((s(std::f64::consts::PI) - (l - a)).abs() < 1e-15);
        }
    }
}

/// A small single-cylinder engine: 50 mm crank, 160 mm rod, from rest at top dead centre.
#[derive(Debug, Clone, Variables)]
pub struct CrankSlider<S: Scalar = f64> {
    #[parameter(start = 0.05, unit = "m", min = 0.0, describe = "Crank radius a (> 0)")]
    crank_radius: Param<S>,
    #[parameter(
        start = 0.16,
        unit = "m",
        min = 0.0,
        describe = "Connecting rod length l (> crank_radius)"
    )]
    rod_length: Param<S>,
    #[parameter(
        name = "J",
        start = 0.02,
        unit = "kg.m2",
        min = 0.0,
        describe = "Inertia of crank and flywheel (> 0: the only inertia at the dead centres)"
    )]
    j: Param<S>,
    #[parameter(start = 0.5, unit = "kg", min = 0.0, describe = "Piston mass")]
    m: Param<S>,
    #[parameter(unit = "rad", describe = "Initial crank angle (0: top dead centre)")]
    phi_start: Param<S>,
    #[parameter(unit = "rad/s", describe = "Initial crank speed")]
    w_start: Param<S>,
    #[input(unit = "N.m", describe = "External torque on the crank")]
    tau: S,
    #[input(
        unit = "N",
        describe = "External force on the piston along s (positive pushes s up)"
    )]
    f: S,
    #[output(unit = "rad", depends_on = ["phi"], initial_depends_on = ["phi_start"], state, angle, from = phi_start, derivative = "w", describe = "Crank angle (state)")]
    phi: S,
    #[output(unit = "rad/s", depends_on = ["w"], initial_depends_on = ["w_start"], state, from = w_start, derivative = "alpha", describe = "Crank speed (state)")]
    w: S,
    #[output(unit = "rad/s2", depends_on = DYNAMIC, describe = "Crank acceleration")]
    alpha: S,
    #[output(unit = "m", depends_on = ["phi"], initial_depends_on = INITIAL_GEOMETRY, describe = "Piston position from the crank axis: a cos(phi) + sqrt(l^2 - a^2 sin(phi)^2)")]
    s: S,
    #[output(unit = "m/s", depends_on = ["phi", "w"], initial_depends_on = ["crank_radius", "rod_length", "phi_start", "w_start"], describe = "Piston speed ds/dt")]
    v: S,
    #[output(unit = "m/s2", depends_on = DYNAMIC, describe = "Piston acceleration")]
    a_s: S,
    #[output(unit = "m/rad", depends_on = ["phi"], initial_depends_on = INITIAL_GEOMETRY, describe = "ds/dphi, the transmission ratio of the mechanism")]
    ds_dphi: S,
    #[output(unit = "m/rad2", depends_on = ["phi"], initial_depends_on = INITIAL_GEOMETRY, describe = "d2s/dphi2")]
    d2s_dphi2: S,
    #[output(unit = "N.m", depends_on = DYNAMIC, describe = "Torque the rod exerts on the crank")]
    tau_rod: S,
    #[output(min = 0.0, depends_on = [], initial_depends_on = [], describe = "Dead centres (phi = k pi) passed since the start, counted by events")]
    dead_centre_count: i32,
    #[local(min = -1.0, max = 1.0, describe = "Sign of sin(phi) since the last dead centre passed (0: not yet left)")]
    side: i32,
}

impl<S: Scalar> CrankSlider<S> {
    /// The mechanism's geometry at the crank angle.
    #[inline(always)]
    fn geometry(&self) -> geometry::Slider<S> {
        let crank = geometry::Crank {
            a: self.crank_radius,
            l: self.rod_length,
        };
        let [s, sp, spp] = self.phi.of_one(&crank);
        geometry::Slider { s, sp, spp }
    }

    /// Crank acceleration from Lagrange's equation with T = (J + m s'^2) w^2 / 2:
    /// `(J + m s'^2) alpha + m s' s'' w^2 = tau + f s'`.
    fn acceleration(&self, sp: S, spp: S) -> S {
        (self.tau + self.f * sp - self.m * sp * spp * self.w * self.w) / (self.j + self.m * sp * sp)
    }
}

impl CrankSlider {
    fn side_of(&self) -> i32 {
        let s = sin(self.phi);
        if s > 0.0 {
            1
        } else if s < 0.0 {
            -1
        } else {
            0
        }
    }
}

const DYNAMIC: &[&str] = &["phi", "w", "tau", "f"];
/// The mechanism's geometry at the start angle.
const INITIAL_GEOMETRY: &[&str] = &["crank_radius", "rod_length", "phi_start"];

/// The mechanism's equations, once for the simulation (`f64`) and its exact derivatives (jets).
impl<S: Scalar> Equations<S> for CrankSlider<S> {
    fn derivatives(&self, _t: f64, dx: &mut [S]) {
        // The geometry first: the knowns the acceleration reads are then loaded after the
        // call, not kept across it.
        let g = self.geometry();
        let (s, dx) = (
            CrankSlider::STATE,
            &mut dx[..<CrankSlider as Variables>::STATES],
        );
        dx[s.phi] = self.w;
        dx[s.w] = self.acceleration(g.sp, g.spp);
    }

    fn outputs(&mut self, _t: f64) {
        let g = self.geometry();
        let (sp, spp) = (g.sp, g.spp);
        let alpha = self.acceleration(sp, spp);
        let a_s = spp * self.w * self.w + sp * alpha;
        (self.alpha, self.v, self.a_s) = (alpha, sp * self.w, a_s);
        // Massless rod, ideal joints: tau_rod dphi + F_rod ds = 0 with the rod's force on the
        // piston F_rod = m a_s - f.
        self.tau_rod = -(self.m * a_s - self.f) * sp;
        (self.s, self.ds_dphi, self.d2s_dphi2) = (g.s, sp, spp);
    }
}

impl Model for CrankSlider {
    const NAME: &'static str = "CrankSlider";
    const DESCRIPTION: &'static str =
        "Crank-slider: crank inertia J and piston mass m on a massless rod; torque and piston force in";
    const DOCUMENTATION: &'static str = include_str!("../documentation.html");
    // A crank at speed turns up to half a radian per 1 ms step: steps limited by accuracy, where
    // Verner's 6(5) pair goes furthest for its evaluations (documentation.html, "Integration").
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(2.0).with_tolerance(1e-6);
    const EVENT_INDICATORS: usize = 1;
    const SIXTH_ORDER_FROM: f64 = 1e-6;

    fn initialize(&mut self, _t: f64) -> Result<(), Invalid> {
        let (a, l) = (self.crank_radius, self.rod_length);
        if !(a.is_finite() && a > 0.0) {
            return Err(Invalid::new("crank_radius", a, "must be positive"));
        }
        if !(l.is_finite() && l > a) {
            return Err(Invalid::new(
                "rod_length",
                l,
                format!(
                    "must be greater than crank_radius = {a}: the rod could not reach the piston"
                ),
            ));
        }
        if !(self.j.is_finite() && self.j > 0.0) {
            return Err(Invalid::new(
                "J",
                self.j,
                "must be positive: it is the only inertia at a dead centre",
            ));
        }
        if !(self.m.is_finite() && self.m >= 0.0) {
            return Err(Invalid::new("m", self.m, "must be >= 0"));
        }
        self.side = self.side_of();
        self.dead_centre_count = 0;
        Ok(())
    }

    /// ds/dphi = -sin(phi) (a + a^2 cos(phi)/R) vanishes exactly where sin(phi) does: the
    /// indicator is sin(phi), on the side the crank last left a dead centre to. Resting at the
    /// dead centre it started at (side 0), it is |sin(phi)|: leaving either way is an event.
    /// Hysteresis 1e-15 + 4 eps |phi| (`dead_centre_hysteresis`: above the rounding of
    /// sin(phi)), which moves a passage by that over |w| s: dead centres stay timed to a few
    /// hundred ulp.
    fn event_indicators(&self, _t: f64, z: &mut Indicators) {
        let (s, h) = (sin(self.phi), dead_centre_hysteresis(self.phi));
        match self.side {
            0 => z.set(0, s.abs(), Side::Negative, h),
            side => z.set(0, s, Side::of(side > 0), h),
        }
    }

    fn event_update(&mut self, _t: f64) -> Result<bool, Invalid> {
        let now = self.side_of();
        // At exactly a dead centre, count it as passed in the direction of travel.
        let heading = if now != 0 {
            now
        } else {
            let rate = cos(self.phi) * self.w;
            if rate > 0.0 {
                1
            } else if rate < 0.0 {
                -1
            } else {
                0
            }
        };
        if heading == 0 || heading == self.side {
            return Ok(false);
        }
        // Leaving the dead centre the run started at is not a passage.
        if self.side != 0 {
            self.dead_centre_count += 1;
        }
        self.side = heading;
        Ok(true)
    }

    /// A crank that has not left its starting dead centre (side 0) has passed none.
    fn check_state(&self) -> Result<(), Invalid> {
        if self.side == 0 && self.dead_centre_count != 0 {
            return Err(Invalid::new(
                "dead_centre_count",
                f64::from(self.dead_centre_count),
                "the crank has not left its starting dead centre (side 0)",
            ));
        }
        Ok(())
    }

    /// One lane per state; the two continuous inputs' columns (tau, f) are swept apart.
    type Jets = CrankSlider<Jet<2>>;
}

export_fmu!(CrankSlider);

#[cfg(test)]
mod tests {
    use super::*;

    /// The hysteresis exceeds the rounding of sin(phi), about one ulp of phi, at every angle,
    /// and is 1e-15 at phi = 0.
    #[test]
    fn the_hysteresis_exceeds_the_rounding_of_the_indicator() {
        assert_eq!(dead_centre_hysteresis(0.0), DEAD_CENTRE_HYSTERESIS);
        for phi in [1.0f64, -7.0, 628.3, 1e4, -1e6] {
            let ulp = f64::from_bits(phi.abs().to_bits() + 1) - phi.abs();
            let h = dead_centre_hysteresis(phi);
            assert!(h > 2.0 * ulp && h < 1e-9, "phi = {phi}: h = {h}, ulp {ulp}");
        }
    }
}
