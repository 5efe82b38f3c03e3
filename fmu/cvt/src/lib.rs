//! Belt CVT: two variable-diameter pulleys whose movable sheaves are tied by the belt length.
//!
//! Equations and derivation: `documentation.html` next to this file (it ships in the FMU).

mod belt;

use belt::{Configuration, Geometry};
use fmu_runtime::{
    export_fmu, integer, real, Experiment, Indicators, Invalid, Model, Side, Var, HYSTERESIS,
};

pub const FREE: i32 = 0;
pub const AT_LOWER: i32 = -1;
pub const AT_UPPER: i32 = 1;

#[derive(Debug, Clone)]
pub struct Cvt {
    // parameters
    geometry: Geometry,
    j1: f64,
    j2: f64,
    m1: f64,
    m2: f64,
    s1_min: f64,
    s1_max: f64,
    s2_min: f64,
    s2_max: f64,
    phi1_start: f64,
    w1_start: f64,
    phi2_start: f64,
    s2_start: f64,
    v2_start: f64,
    // calculated parameters
    l0: f64,
    s2_lo: f64,
    s2_hi: f64,
    // inputs
    tau_1: f64,
    tau_2: f64,
    f_1: f64,
    f_2: f64,
    // states
    phi1: f64,
    w1: f64,
    phi2: f64,
    s2: f64,
    v2: f64,
    // changed at events only
    energy_impact: f64,
    sheave_mode: i32,
    // outputs
    s1: f64,
    v1: f64,
    w2: f64,
    a1: f64,
    a2: f64,
    d1: f64,
    d2: f64,
    ratio: f64,
    ds1_ds2: f64,
    tau_support: f64,
}

impl Default for Cvt {
    /// A scooter-sized CVT: 250 mm centre distance, 80/120 mm working diameters.
    fn default() -> Self {
        Cvt {
            geometry: Geometry {
                c: 0.25,
                d1_bar: 0.08,
                d2_bar: 0.12,
                s1_bar: 0.0,
                s2_bar: 0.0,
                c1: 4.0,
                c2: 4.0,
            },
            j1: 0.01,
            j2: 0.02,
            m1: 0.5,
            m2: 0.8,
            s1_min: -0.006,
            s1_max: 0.006,
            s2_min: -0.006,
            s2_max: 0.006,
            phi1_start: 0.0,
            w1_start: 0.0,
            phi2_start: 0.0,
            s2_start: 0.0,
            v2_start: 0.0,
            l0: 0.0,
            s2_lo: 0.0,
            s2_hi: 0.0,
            tau_1: 0.0,
            tau_2: 0.0,
            f_1: 0.0,
            f_2: 0.0,
            phi1: 0.0,
            w1: 0.0,
            phi2: 0.0,
            s2: 0.0,
            v2: 0.0,
            energy_impact: 0.0,
            sheave_mode: FREE,
            s1: 0.0,
            v1: 0.0,
            w2: 0.0,
            a1: 0.0,
            a2: 0.0,
            d1: 0.0,
            d2: 0.0,
            ratio: 0.0,
            ds1_ds2: 0.0,
            tau_support: 0.0,
        }
    }
}

/// Accelerations at one instant.
struct Motion {
    cfg: Configuration,
    /// dw1/dt
    a1: f64,
    /// dv2/dt
    a2: f64,
    /// Net generalized force on s2 with the sheaves at rest: what presses them onto a stop.
    push: f64,
}

impl Cvt {
    /// Lagrange with q = (phi1, s2), T = (J1 + J2 rho^2) w1^2/2 + (m2 + m1 s1'^2) v2^2/2:
    /// `(J1 + J2 rho^2) a1 + 2 J2 rho rho' v2 w1 = tau_1 + rho tau_2`,
    /// `(m2 + m1 s1'^2) a2 + m1 s1' s1'' v2^2 - J2 rho rho' w1^2 = F_2 + F_1 s1'`.
    fn motion(&self) -> Option<Motion> {
        let g = self.geometry;
        let cfg = g.configuration(self.s2, g.solve_s1(self.l0, self.s2)?);
        let (rho, rho_p, s1p, s1pp) = (cfg.rho, cfg.rho_p, cfg.s1p, cfg.s1pp);
        let v2 = if self.sheave_mode == FREE {
            self.v2
        } else {
            0.0
        };
        let inertia = self.j1 + self.j2 * rho * rho;
        let a1 =
            (self.tau_1 + rho * self.tau_2 - 2.0 * self.j2 * rho * rho_p * v2 * self.w1) / inertia;
        let push = self.f_2 + self.f_1 * s1p + self.j2 * rho * rho_p * self.w1 * self.w1;
        let mass = self.m2 + self.m1 * s1p * s1p;
        let a2 = if self.sheave_mode == FREE {
            (push - self.m1 * s1p * s1pp * v2 * v2) / mass
        } else {
            0.0
        };
        Some(Motion { cfg, a1, a2, push })
    }

    /// Kinetic energy of the sheaves, lost in an inelastic stop.
    fn sheave_energy(&self, cfg: &Configuration) -> f64 {
        0.5 * (self.m2 + self.m1 * cfg.s1p * cfg.s1p) * self.v2 * self.v2
    }

    fn check_parameters(&self) -> Result<(), Invalid> {
        let positive = [
            ("C", self.geometry.c),
            ("D1_bar", self.geometry.d1_bar),
            ("D2_bar", self.geometry.d2_bar),
            ("c1", self.geometry.c1),
            ("c2", self.geometry.c2),
            ("J1", self.j1),
            ("J2", self.j2),
            ("m1", self.m1),
            ("m2", self.m2),
        ];
        for (name, x) in positive {
            if !(x.is_finite() && x > 0.0) {
                return Err(Invalid::new(name, x, "must be positive"));
            }
        }
        if !self
            .geometry
            .valid(self.geometry.d1_bar, self.geometry.d2_bar)
        {
            return Err(Invalid::new(
                "C",
                self.geometry.c,
                format!(
                    "too short for D1_bar = {} and D2_bar = {}: |D2 - D1|/(2C) must be <= {}",
                    self.geometry.d1_bar,
                    self.geometry.d2_bar,
                    belt::MAX_SIN_BETA
                ),
            ));
        }
        for (lo, hi, lo_name, bar, bar_name) in [
            (
                self.s1_min,
                self.s1_max,
                "s1_min",
                self.geometry.s1_bar,
                "s1_bar",
            ),
            (
                self.s2_min,
                self.s2_max,
                "s2_min",
                self.geometry.s2_bar,
                "s2_bar",
            ),
        ] {
            if lo >= hi {
                return Err(Invalid::new(
                    lo_name,
                    lo,
                    format!("must be below the maximum {hi}"),
                ));
            }
            if !(lo <= bar && bar <= hi) {
                return Err(Invalid::new(
                    bar_name,
                    bar,
                    format!("must lie in the travel [{lo}, {hi}]"),
                ));
            }
        }
        Ok(())
    }

    /// The pulleys must not overlap anywhere in the sheave travel: C > (D1 + D2)/2. The belt
    /// geometry accepts overlapping pulleys (C = 0.05 m with the default 80/120 mm diameters
    /// gives a belt length and a ratio), so it is checked here, on 201 points of the travel and
    /// its ends, where D1 + D2 is largest.
    fn check_pulleys_apart(&self, lo: f64, hi: f64) -> Result<(), Invalid> {
        let g = self.geometry;
        let mut largest = (f64::NEG_INFINITY, lo);
        for k in 0..=200 {
            let s2 = lo + (hi - lo) * f64::from(k) / 200.0;
            let Some(on) = g.solve_s1(self.l0, s2) else {
                continue;
            };
            let s1 = on.s1;
            let half_sum = 0.5 * (g.d1(s1) + g.d2(s2));
            if half_sum > largest.0 {
                largest = (half_sum, s2);
            }
        }
        let (half_sum, s2) = largest;
        if g.c <= half_sum {
            return Err(Invalid::new(
                "C",
                g.c,
                format!(
                    "the pulleys overlap: the centre distance must exceed (D1 + D2)/2, which reaches {half_sum} m at s2 = {s2} m in the sheave travel [{lo}, {hi}]"
                ),
            ));
        }
        Ok(())
    }

    /// The travel of s2 that keeps both sheaves within their limits (s1 falls as s2 rises).
    fn effective_travel(&self) -> Result<(f64, f64), Invalid> {
        let g = self.geometry;
        let impossible = |name: &'static str, x: f64| {
            Invalid::new(name, x, "puts the belt geometry out of range (D <= 0, spans near vertical, or no belt position)")
        };
        let s2_at_s1_max = g
            .solve_s2(self.s1_max, self.geometry.s2_bar)
            .ok_or_else(|| impossible("s1_max", self.s1_max))?;
        let s2_at_s1_min = g
            .solve_s2(self.s1_min, self.geometry.s2_bar)
            .ok_or_else(|| impossible("s1_min", self.s1_min))?;
        let lo = self.s2_min.max(s2_at_s1_max);
        let hi = self.s2_max.min(s2_at_s1_min);
        for (name, s2) in [("s2_min", lo), ("s2_max", hi)] {
            g.solve_s1(self.l0, s2)
                .ok_or_else(|| impossible(name, s2))?;
        }
        Ok((lo, hi))
    }
}

const ROTATION: &[&str] = &["w1", "s2", "v2", "tau_1", "tau_2"];
const SHEAVES: &[&str] = &["w1", "s2", "v2", "F_1", "F_2"];

impl Model for Cvt {
    const NAME: &'static str = "CVT";
    const DESCRIPTION: &'static str =
        "Belt CVT: primary and secondary pulleys with movable sheaves tied by the belt length, travel stops";
    const DOCUMENTATION: &'static str = include_str!("../documentation.html");
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(2.0);
    const STATES: usize = 5;
    const EVENT_INDICATORS: usize = 2;
    const ANGLE_STATES: &'static [usize] = &[0, 2];

    fn variables() -> Vec<Var<Self>> {
        vec![
            Var::parameter("C", real!(geometry.c)).unit("m").min(0.0).describe("Centre distance of the pulleys"),
            Var::parameter("D1_bar", real!(geometry.d1_bar)).unit("m").min(0.0).describe("Primary working diameter at s1 = s1_bar"),
            Var::parameter("D2_bar", real!(geometry.d2_bar)).unit("m").min(0.0).describe("Secondary working diameter at s2 = s2_bar"),
            Var::parameter("s1_bar", real!(geometry.s1_bar)).unit("m").describe("Primary sheave position of the reference configuration"),
            Var::parameter("s2_bar", real!(geometry.s2_bar)).unit("m").describe("Secondary sheave position of the reference configuration"),
            Var::parameter("c1", real!(geometry.c1)).min(0.0).describe("dD1/ds1 (> 0)"),
            Var::parameter("c2", real!(geometry.c2)).min(0.0).describe("dD2/ds2 (> 0)"),
            Var::parameter("J1", real!(j1)).unit("kg.m2").min(0.0).describe("Primary shaft inertia"),
            Var::parameter("J2", real!(j2)).unit("kg.m2").min(0.0).describe("Secondary shaft inertia"),
            Var::parameter("m1", real!(m1)).unit("kg").min(0.0).describe("Mass of the movable primary sheave"),
            Var::parameter("m2", real!(m2)).unit("kg").min(0.0).describe("Mass of the movable secondary sheave"),
            Var::parameter("s1_min", real!(s1_min)).unit("m").describe("Lower travel limit of the primary sheave"),
            Var::parameter("s1_max", real!(s1_max)).unit("m").describe("Upper travel limit of the primary sheave"),
            Var::parameter("s2_min", real!(s2_min)).unit("m").describe("Lower travel limit of the secondary sheave"),
            Var::parameter("s2_max", real!(s2_max)).unit("m").describe("Upper travel limit of the secondary sheave"),
            Var::parameter("phi1_start", real!(phi1_start)).unit("rad").describe("Initial primary angle"),
            Var::parameter("w1_start", real!(w1_start)).unit("rad/s").describe("Initial primary speed"),
            Var::parameter("phi2_start", real!(phi2_start)).unit("rad").describe("Initial secondary angle"),
            Var::parameter("s2_start", real!(s2_start)).unit("m").describe("Initial secondary sheave position (s1 follows from the belt)"),
            Var::parameter("v2_start", real!(v2_start)).unit("m/s").describe("Initial secondary sheave speed"),
            Var::calculated_parameter("L0", real!(l0))
                .unit("m")
                .describe("Belt length, from D1_bar, D2_bar and C")
                .initial_depends_on(&["C", "D1_bar", "D2_bar"]),
            Var::calculated_parameter("s2_lo", real!(s2_lo))
                .unit("m")
                .describe("Lowest s2 that keeps both sheaves within their limits"),
            Var::calculated_parameter("s2_hi", real!(s2_hi))
                .unit("m")
                .describe("Highest s2 that keeps both sheaves within their limits"),
            Var::input("tau_1", real!(tau_1)).unit("N.m").describe("External torque on the primary shaft"),
            Var::input("tau_2", real!(tau_2)).unit("N.m").describe("External torque on the secondary shaft"),
            Var::input("F_1", real!(f_1)).unit("N").describe("Axial actuator force on the primary sheave, along s1"),
            Var::input("F_2", real!(f_2)).unit("N").describe("Axial actuator force on the secondary sheave, along s2"),
            Var::output("phi1", real!(phi1)).unit("rad").describe("Primary angle (state)").depends_on(&["phi1"]),
            Var::output("w1", real!(w1))
                .unit("rad/s")
                .describe("Primary speed (state)")
                .derivative_of("phi1")
                .depends_on(&["w1"]),
            Var::output("a1", real!(a1))
                .unit("rad/s2")
                .describe("Primary acceleration")
                .derivative_of("w1")
                .depends_on(ROTATION),
            Var::output("phi2", real!(phi2)).unit("rad").describe("Secondary angle (state)").depends_on(&["phi2"]),
            Var::output("w2", real!(w2))
                .unit("rad/s")
                .describe("Secondary speed, (D1/D2) w1")
                .derivative_of("phi2")
                .depends_on(&["w1", "s2"]),
            Var::output("s1", real!(s1)).unit("m").describe("Primary sheave position, from the belt constraint").depends_on(&["s2"]),
            Var::output("v1", real!(v1)).unit("m/s").describe("Primary sheave speed").depends_on(&["s2", "v2"]),
            Var::output("s2", real!(s2)).unit("m").describe("Secondary sheave position (state)").depends_on(&["s2"]),
            Var::output("v2", real!(v2))
                .unit("m/s")
                .describe("Secondary sheave speed (state)")
                .derivative_of("s2")
                .depends_on(&["v2"]),
            Var::output("a2", real!(a2))
                .unit("m/s2")
                .describe("Secondary sheave acceleration")
                .derivative_of("v2")
                .depends_on(SHEAVES),
            Var::output("D1", real!(d1)).unit("m").describe("Primary working diameter").depends_on(&["s2"]),
            Var::output("D2", real!(d2)).unit("m").describe("Secondary working diameter").depends_on(&["s2"]),
            Var::output("ratio", real!(ratio)).describe("D2/D1 = w1/w2").depends_on(&["s2"]),
            Var::output("ds1_ds2", real!(ds1_ds2)).describe("ds1/ds2 along the belt constraint").depends_on(&["s2"]),
            Var::output("energy_impact", real!(energy_impact))
                .unit("J")
                .describe("Sheave kinetic energy lost in inelastic stops at the travel limits")
                .depends_on(&["s2", "v2"]),
            Var::support_torque(real!(tau_support)).depends_on(ROTATION),
            Var::output("sheave_mode", integer!(sheave_mode))
                .describe("0 sheaves free, -1 held at the lower end of the s2 travel, +1 at the upper end")
                .depends_on(SHEAVES),
        ]
    }

    fn initialize(&mut self) -> Result<(), Invalid> {
        self.check_parameters()?;
        self.l0 = self.geometry.l0();
        let (lo, hi) = self.effective_travel()?;
        if lo >= hi {
            return Err(Invalid::new(
                "s2_min",
                self.s2_min,
                format!("the travel limits leave no room: s2 in [{lo}, {hi}]"),
            ));
        }
        (self.s2_lo, self.s2_hi) = (lo, hi);
        self.check_pulleys_apart(lo, hi)?;
        if !(lo <= self.s2_start && self.s2_start <= hi) {
            return Err(Invalid::new(
                "s2_start",
                self.s2_start,
                format!("must lie in the travel [{lo}, {hi}]"),
            ));
        }
        self.phi1 = self.phi1_start;
        self.w1 = self.w1_start;
        self.phi2 = self.phi2_start;
        self.s2 = self.s2_start;
        self.v2 = self.v2_start;
        self.energy_impact = 0.0;
        self.sheave_mode = FREE;
        self.s1 = self
            .geometry
            .solve_s1(self.l0, self.s2)
            .expect("checked by effective_travel")
            .s1;
        Ok(())
    }

    fn get_states(&self, x: &mut [f64]) {
        x.copy_from_slice(&[self.phi1, self.w1, self.phi2, self.s2, self.v2]);
    }

    fn set_states(&mut self, x: &[f64]) {
        (self.phi1, self.w1, self.phi2, self.s2, self.v2) = (x[0], x[1], x[2], x[3], x[4]);
    }

    fn derivatives(&self, _t: f64, dx: &mut [f64]) {
        match self.motion() {
            Some(m) => {
                let v2 = if self.sheave_mode == FREE {
                    self.v2
                } else {
                    0.0
                };
                dx.copy_from_slice(&[self.w1, m.a1, m.cfg.rho * self.w1, v2, m.a2]);
            }
            // Only reachable on a rejected trial step far outside the checked travel: NaN makes
            // the integrator shrink the step or fail, and a failed step restores the state.
            None => dx.fill(f64::NAN),
        }
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
                    self.energy_impact += self.sheave_energy(&m.cfg);
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

    fn update_outputs(&mut self, _t: f64) {
        if let Some(m) = self.motion() {
            let c = m.cfg;
            self.s1 = c.s1;
            self.d1 = c.d1;
            self.d2 = c.d2;
            self.ratio = c.d2 / c.d1;
            self.ds1_ds2 = c.s1p;
            self.w2 = c.rho * self.w1;
            self.v1 = c.s1p * self.v2;
            self.a1 = m.a1;
            self.a2 = m.a2;
            // Both pulleys turn the same way about parallel axes: the angular momentum is
            // J1 w1 + J2 w2, with w2 = rho w1, so dw2/dt = rho a1 + rho' v2 w1 (v2 = 0 while
            // the sheaves are held). The housing supplies what the shaft torques do not.
            let v2 = if self.sheave_mode == FREE {
                self.v2
            } else {
                0.0
            };
            let a2_rot = c.rho * m.a1 + c.rho_p * v2 * self.w1;
            self.tau_support = self.j1 * m.a1 + self.j2 * a2_rot - self.tau_1 - self.tau_2;
        }
    }
}

export_fmu!(Cvt);
