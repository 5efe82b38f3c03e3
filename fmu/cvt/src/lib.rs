//! Belt CVT: two variable-diameter pulleys whose movable sheaves are tied by the belt length.
//!
//! Equations and derivation: `documentation.html` next to this file (it ships in the FMU).

mod belt;
mod checks;
mod equations;

use belt::Geometry;
use fmu_runtime::declare::concat_names;
use fmu_runtime::{
    export_fmu, Equations, Experiment, Indicators, Invalid, Jet, Model, Param, Scalar, Side,
    Variables, HYSTERESIS,
};

pub const FREE: i32 = 0;
pub const AT_LOWER: i32 = -1;
pub const AT_UPPER: i32 = 1;

/// A scooter-sized CVT: 250 mm centre distance, 80/120 mm working diameters. Every Real field
/// is an `S`, every parameter a `Param<S>`: `Cvt<f64>` is the simulation, `Cvt<Jet<5>>` its
/// exact derivatives (`equations.rs`).
#[derive(Debug, Clone, Variables)]
pub struct Cvt<S: Scalar = f64> {
    #[variables]
    geometry: Geometry<S>,
    #[parameter(
        name = "J1",
        start = 0.01,
        unit = "kg.m2",
        min = 0.0,
        describe = "Primary shaft inertia"
    )]
    j1: Param<S>,
    #[parameter(
        name = "J2",
        start = 0.02,
        unit = "kg.m2",
        min = 0.0,
        describe = "Secondary shaft inertia"
    )]
    j2: Param<S>,
    #[parameter(
        start = 0.5,
        unit = "kg",
        min = 0.0,
        describe = "Mass of the movable primary sheave"
    )]
    m1: Param<S>,
    #[parameter(
        start = 0.8,
        unit = "kg",
        min = 0.0,
        describe = "Mass of the movable secondary sheave"
    )]
    m2: Param<S>,
    #[parameter(start = -0.006, unit = "m", describe = "Lower travel limit of the primary sheave")]
    s1_min: Param<S>,
    #[parameter(
        start = 0.006,
        unit = "m",
        describe = "Upper travel limit of the primary sheave"
    )]
    s1_max: Param<S>,
    #[parameter(start = -0.006, unit = "m", describe = "Lower travel limit of the secondary sheave")]
    s2_min: Param<S>,
    #[parameter(
        start = 0.006,
        unit = "m",
        describe = "Upper travel limit of the secondary sheave"
    )]
    s2_max: Param<S>,
    #[parameter(unit = "rad", describe = "Initial primary angle")]
    phi1_start: Param<S>,
    #[parameter(unit = "rad/s", describe = "Initial primary speed")]
    w1_start: Param<S>,
    #[parameter(unit = "rad", describe = "Initial secondary angle")]
    phi2_start: Param<S>,
    #[parameter(
        unit = "m",
        describe = "Initial secondary sheave position (s1 follows from the belt)"
    )]
    s2_start: Param<S>,
    #[parameter(unit = "m/s", describe = "Initial secondary sheave speed")]
    v2_start: Param<S>,
    #[calculated_parameter(name = "L0", unit = "m", initial_depends_on = ["C", "D1_bar", "D2_bar"], describe = "Belt length, from D1_bar, D2_bar and C")]
    l0: Param<S>,
    #[calculated_parameter(
        initial_depends_on = ["C", "D1_bar", "D2_bar", "s1_bar", "s2_bar", "c1", "c2", "s1_max", "s2_min"],
        unit = "m",
        describe = "Lowest s2 that keeps both sheaves within their limits"
    )]
    s2_lo: Param<S>,
    #[calculated_parameter(
        initial_depends_on = ["C", "D1_bar", "D2_bar", "s1_bar", "s2_bar", "c1", "c2", "s1_min", "s2_max"],
        unit = "m",
        describe = "Highest s2 that keeps both sheaves within their limits"
    )]
    s2_hi: Param<S>,
    #[input(unit = "N.m", describe = "External torque on the primary shaft")]
    tau_1: S,
    #[input(unit = "N.m", describe = "External torque on the secondary shaft")]
    tau_2: S,
    #[input(
        name = "F_1",
        unit = "N",
        describe = "Axial actuator force on the primary sheave, along s1"
    )]
    f_1: S,
    #[input(
        name = "F_2",
        unit = "N",
        describe = "Axial actuator force on the secondary sheave, along s2"
    )]
    f_2: S,
    #[output(unit = "rad", depends_on = ["phi1"], initial_depends_on = ["phi1_start"], state, angle, from = phi1_start, derivative = "w1", describe = "Primary angle (state)")]
    phi1: S,
    #[output(unit = "rad/s", depends_on = ["w1"], initial_depends_on = ["w1_start"], state, from = w1_start, derivative = "a1", describe = "Primary speed (state)")]
    w1: S,
    #[output(unit = "rad/s2", depends_on = ROTATION, initial_depends_on = &INITIAL_A1, describe = "Primary acceleration")]
    a1: S,
    #[output(unit = "rad", depends_on = ["phi2"], initial_depends_on = ["phi2_start"], state, angle, from = phi2_start, derivative = "w2", describe = "Secondary angle (state)")]
    phi2: S,
    #[output(unit = "rad/s", depends_on = ["w1", "s2"], initial_depends_on = ["C", "D1_bar", "D2_bar", "s2_bar", "c2", "w1_start", "s2_start"], describe = "Secondary speed, (D1/D2) w1")]
    w2: S,
    #[output(unit = "m", depends_on = ["s2"], initial_depends_on = ["C", "D1_bar", "D2_bar", "s1_bar", "s2_bar", "c1", "c2", "s2_start"], describe = "Primary sheave position, from the belt constraint")]
    s1: S,
    #[output(unit = "m/s", depends_on = ["s2", "v2"], initial_depends_on = &STOPS, describe = "Primary sheave speed")]
    v1: S,
    #[output(unit = "m", depends_on = ["s2"], initial_depends_on = ["s2_start"], state, from = s2_start, derivative = "v2", describe = "Secondary sheave position (state)")]
    s2: S,
    #[output(unit = "m/s", depends_on = ["v2"], initial_depends_on = &STOPS, state, from = v2_start, derivative = "a2", describe = "Secondary sheave speed (state)")]
    v2: S,
    #[output(unit = "m/s2", depends_on = SHEAVES, initial_depends_on = &INITIAL_A2, describe = "Secondary sheave acceleration")]
    a2: S,
    #[output(name = "D1", unit = "m", depends_on = ["s2"], initial_depends_on = INITIAL_RATIO, describe = "Primary working diameter")]
    d1: S,
    #[output(name = "D2", unit = "m", depends_on = ["s2"], initial_depends_on = ["D2_bar", "s2_bar", "c2", "s2_start"], describe = "Secondary working diameter")]
    d2: S,
    #[output(depends_on = ["s2"], initial_depends_on = INITIAL_RATIO, describe = "D2/D1 = w1/w2")]
    ratio: S,
    #[output(depends_on = ["s2"], initial_depends_on = ["C", "D1_bar", "D2_bar", "s2_bar", "c1", "c2", "s2_start"], describe = "ds1/ds2 along the belt constraint")]
    ds1_ds2: S,
    #[output(unit = "J", depends_on = [], initial_depends_on = &INITIAL_IMPACT, describe = "Sheave kinetic energy lost in inelastic stops at the travel limits")]
    energy_impact: S,
    #[support_torque(depends_on = ROTATION, initial_depends_on = &INITIAL_A1)]
    tau_support: S,
    #[output(start = FREE, min = AT_LOWER as f64, max = AT_UPPER as f64, depends_on = [], initial_depends_on = &INITIAL_MODE, describe = "0 sheaves free, -1 held at the lower end of the s2 travel, +1 at the upper end")]
    sheave_mode: i32,
}

const ROTATION: &[&str] = &["w1", "s2", "v2", "tau_1", "tau_2"];
const SHEAVES: &[&str] = &["w1", "s2", "v2", "F_1", "F_2"];

// At the start the sheave may sit on a stop, where it is held or not and its speed lost: what
// follows the sheave's motion follows the stops, that is the belt geometry and every limit.
const STOPS: [&str; 13] = [
    "C", "D1_bar", "D2_bar", "s1_bar", "s2_bar", "c1", "c2", "s1_min", "s1_max", "s2_min",
    "s2_max", "s2_start", "v2_start",
];
const INITIAL_RATIO: &[&str] = &["C", "D1_bar", "D2_bar", "s2_bar", "c2", "s2_start"];
const INITIAL_A1: [&str; 18] = concat_names(&[&STOPS, &["J1", "J2", "w1_start", "tau_1", "tau_2"]]);
const INITIAL_A2: [&str; 19] =
    concat_names(&[&STOPS, &["J2", "m1", "m2", "w1_start", "F_1", "F_2"]]);
const INITIAL_IMPACT: [&str; 15] = concat_names(&[&STOPS, &["m1", "m2"]]);
/// Held on a stop while the actuators and the belt push the sheave into it.
const INITIAL_MODE: [&str; 17] = concat_names(&[&STOPS, &["J2", "w1_start", "F_1", "F_2"]]);

impl Model for Cvt {
    const NAME: &'static str = "CVT";
    const DESCRIPTION: &'static str =
        "Belt CVT: primary and secondary pulleys with movable sheaves tied by the belt length, travel stops";
    const DOCUMENTATION: &'static str = include_str!("../documentation.html");
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(2.0);
    const EVENT_INDICATORS: usize = 2;

    fn initialize(&mut self, t: f64) -> Result<(), Invalid> {
        self.check_parameters()?;
        // Free until the event iteration at the start finds the sheaves on a stop.
        self.energy_impact = 0.0;
        self.sheave_mode = FREE;
        self.calculated(t);
        let (lo, hi) = self.check_travel()?;
        self.check_pulleys_apart(lo, hi)?;
        if !(lo <= self.s2_start && self.s2_start <= hi) {
            return Err(Invalid::new(
                "s2_start",
                self.s2_start,
                format!("must lie in the travel [{lo}, {hi}]"),
            ));
        }
        self.s1 = self
            .geometry
            .solve_s1(self.l0, self.s2)
            .expect("checked by check_travel")
            .s1;
        Ok(())
    }

    /// Free: the distances to both ends of the travel (hysteresis 1e-12 of the travel). Held
    /// at an end: the net force pressing the sheave into it (hysteresis 1e-12 N).
    fn event_indicators(&self, _t: f64, z: &mut Indicators) {
        match self.sheave_mode {
            FREE => {
                let h = HYSTERESIS * (self.s2_hi - self.s2_lo);
                z.set(0, self.s2 - self.s2_lo, Side::Positive, h);
                z.set(1, self.s2_hi - self.s2, Side::Positive, h);
            }
            mode => {
                let push = self.motion().map_or(0.0, |m| m.push);
                z.set(0, push, Side::of(mode == AT_UPPER), HYSTERESIS);
                z.unused(1);
            }
        }
    }

    fn event_update(&mut self, _t: f64) -> Result<bool, Invalid> {
        // Inside the travel a free sheave has nothing to decide, and the geometry is valid
        // there (checked at initialization): the constraint solve is only needed at the stops.
        if self.sheave_mode == FREE && self.s2_lo < self.s2 && self.s2 < self.s2_hi {
            return Ok(false);
        }
        let m = self.motion().ok_or_else(|| {
            Invalid::new(
                "s2",
                self.s2,
                "belt geometry out of range: no position of the primary sheave fits the belt",
            )
        })?;
        match self.sheave_mode {
            FREE => {
                // A stop reached exactly counts when the sheave is heading into it.
                let heading = if self.v2 != 0.0 { self.v2 } else { m.a2 };
                let stop = if self.s2 < self.s2_lo || (self.s2 == self.s2_lo && heading < 0.0) {
                    Some((self.s2_lo, AT_LOWER))
                } else if self.s2 > self.s2_hi || (self.s2 == self.s2_hi && heading > 0.0) {
                    Some((self.s2_hi, AT_UPPER))
                } else {
                    None
                };
                if let Some((s2, mode)) = stop {
                    // Inelastic: the sheaves stop, their kinetic energy is lost; the pulley
                    // speeds do not jump (no cross term between w1 and v2 in T).
                    self.energy_impact += self.sheave_energy(&m.cfg, self.v2);
                    self.s2 = s2;
                    self.v2 = 0.0;
                    self.sheave_mode = mode;
                    self.s1 = self
                        .geometry
                        .solve_s1(self.l0, s2)
                        .map_or(self.s1, |on| on.s1);
                    return Ok(true);
                }
            }
            mode => {
                // Held until the net force pulls the sheave away from the stop.
                if m.push * f64::from(mode) < 0.0 {
                    self.sheave_mode = FREE;
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Held on a stop, the sheave is at it, at rest.
    fn check_state(&self) -> Result<(), Invalid> {
        let stop = match self.sheave_mode {
            AT_LOWER => self.s2_lo,
            AT_UPPER => self.s2_hi,
            _ => return Ok(()),
        };
        if self.s2 != stop {
            return Err(Invalid::new(
                "s2",
                self.s2,
                format!(
                    "the sheave is held on its stop at {stop} (sheave_mode {})",
                    self.sheave_mode
                ),
            ));
        }
        if self.v2 != 0.0 {
            return Err(Invalid::new(
                "v2",
                self.v2,
                "the sheave is held on a stop: it does not move",
            ));
        }
        Ok(())
    }

    /// One lane per state; the four continuous inputs' columns (tau_1, tau_2, F_1, F_2) are
    /// swept apart.
    type Jets = Cvt<Jet<5>>;
}

export_fmu!(Cvt);

#[cfg(test)]
mod tests {
    use super::*;

    /// A sheave held on a stop (restored in that mode, say) is at that stop and at rest; off
    /// its stop, or moving, it is refused naming s2 or v2. Free, it may be anywhere.
    #[test]
    fn a_held_sheave_is_at_its_stop_and_at_rest() {
        let (lo, hi) = (0.01, 0.02);
        let cvt = |mode, s2, v2| Cvt {
            s2_lo: lo,
            s2_hi: hi,
            sheave_mode: mode,
            s2,
            v2,
            ..Cvt::default()
        };
        for (mode, stop) in [(AT_LOWER, lo), (AT_UPPER, hi)] {
            assert!(cvt(mode, stop, 0.0).check_state().is_ok(), "mode {mode}");
            for (s2, v2, name) in [(0.015, 0.0, "s2"), (stop, 1e-3, "v2")] {
                let error = format!("{:?}", cvt(mode, s2, v2).check_state().err());
                assert!(
                    error.contains(name),
                    "mode {mode}, s2 {s2}, v2 {v2}: {error}"
                );
            }
        }
        assert!(cvt(FREE, 0.015, 0.3).check_state().is_ok());
    }
}
