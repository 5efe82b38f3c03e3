//! Belt CVT: two variable-diameter pulleys whose movable sheaves are tied by the belt length.
//!
//! Equations and derivation: `documentation.html` next to this file (it ships in the FMU).

mod belt;

use belt::{Configuration, Geometry, Shape};
use fmu_runtime::declare::concat_names;
use fmu_runtime::{
    export_fmu, Dual, Experiment, Indicators, Invalid, Model, Scalar, Side, Variables, HYSTERESIS,
};

pub const FREE: i32 = 0;
pub const AT_LOWER: i32 = -1;
pub const AT_UPPER: i32 = 1;

/// A scooter-sized CVT: 250 mm centre distance, 80/120 mm working diameters.
#[derive(Debug, Clone, Variables)]
pub struct Cvt {
    #[variables]
    geometry: Geometry,
    #[parameter(
        name = "J1",
        start = 0.01,
        unit = "kg.m2",
        min = 0.0,
        describe = "Primary shaft inertia"
    )]
    j1: f64,
    #[parameter(
        name = "J2",
        start = 0.02,
        unit = "kg.m2",
        min = 0.0,
        describe = "Secondary shaft inertia"
    )]
    j2: f64,
    #[parameter(
        start = 0.5,
        unit = "kg",
        min = 0.0,
        describe = "Mass of the movable primary sheave"
    )]
    m1: f64,
    #[parameter(
        start = 0.8,
        unit = "kg",
        min = 0.0,
        describe = "Mass of the movable secondary sheave"
    )]
    m2: f64,
    #[parameter(start = -0.006, unit = "m", describe = "Lower travel limit of the primary sheave")]
    s1_min: f64,
    #[parameter(
        start = 0.006,
        unit = "m",
        describe = "Upper travel limit of the primary sheave"
    )]
    s1_max: f64,
    #[parameter(start = -0.006, unit = "m", describe = "Lower travel limit of the secondary sheave")]
    s2_min: f64,
    #[parameter(
        start = 0.006,
        unit = "m",
        describe = "Upper travel limit of the secondary sheave"
    )]
    s2_max: f64,
    #[parameter(unit = "rad", describe = "Initial primary angle")]
    phi1_start: f64,
    #[parameter(unit = "rad/s", describe = "Initial primary speed")]
    w1_start: f64,
    #[parameter(unit = "rad", describe = "Initial secondary angle")]
    phi2_start: f64,
    #[parameter(
        unit = "m",
        describe = "Initial secondary sheave position (s1 follows from the belt)"
    )]
    s2_start: f64,
    #[parameter(unit = "m/s", describe = "Initial secondary sheave speed")]
    v2_start: f64,
    #[calculated_parameter(name = "L0", unit = "m", initial_depends_on = ["C", "D1_bar", "D2_bar"], describe = "Belt length, from D1_bar, D2_bar and C")]
    l0: f64,
    #[calculated_parameter(
        initial_depends_on = ["C", "D1_bar", "D2_bar", "s1_bar", "s2_bar", "c1", "c2", "s1_max", "s2_min"],
        unit = "m",
        describe = "Lowest s2 that keeps both sheaves within their limits"
    )]
    s2_lo: f64,
    #[calculated_parameter(
        initial_depends_on = ["C", "D1_bar", "D2_bar", "s1_bar", "s2_bar", "c1", "c2", "s1_min", "s2_max"],
        unit = "m",
        describe = "Highest s2 that keeps both sheaves within their limits"
    )]
    s2_hi: f64,
    #[input(unit = "N.m", describe = "External torque on the primary shaft")]
    tau_1: f64,
    #[input(unit = "N.m", describe = "External torque on the secondary shaft")]
    tau_2: f64,
    #[input(
        name = "F_1",
        unit = "N",
        describe = "Axial actuator force on the primary sheave, along s1"
    )]
    f_1: f64,
    #[input(
        name = "F_2",
        unit = "N",
        describe = "Axial actuator force on the secondary sheave, along s2"
    )]
    f_2: f64,
    #[output(unit = "rad", depends_on = ["phi1"], initial_depends_on = ["phi1_start"], state, angle, from = phi1_start, derivative = "w1", describe = "Primary angle (state)")]
    phi1: f64,
    #[output(unit = "rad/s", depends_on = ["w1"], initial_depends_on = ["w1_start"], state, from = w1_start, derivative = "a1", describe = "Primary speed (state)")]
    w1: f64,
    #[output(unit = "rad/s2", depends_on = ROTATION, initial_depends_on = &INITIAL_A1, describe = "Primary acceleration")]
    a1: f64,
    #[output(unit = "rad", depends_on = ["phi2"], initial_depends_on = ["phi2_start"], state, angle, from = phi2_start, derivative = "w2", describe = "Secondary angle (state)")]
    phi2: f64,
    #[output(unit = "rad/s", depends_on = ["w1", "s2"], initial_depends_on = ["C", "D1_bar", "D2_bar", "s2_bar", "c2", "w1_start", "s2_start"], describe = "Secondary speed, (D1/D2) w1")]
    w2: f64,
    #[output(unit = "m", depends_on = ["s2"], initial_depends_on = ["C", "D1_bar", "D2_bar", "s1_bar", "s2_bar", "c1", "c2", "s2_start"], describe = "Primary sheave position, from the belt constraint")]
    s1: f64,
    #[output(unit = "m/s", depends_on = ["s2", "v2"], initial_depends_on = &STOPS, describe = "Primary sheave speed")]
    v1: f64,
    #[output(unit = "m", depends_on = ["s2"], initial_depends_on = ["s2_start"], state, from = s2_start, derivative = "v2", describe = "Secondary sheave position (state)")]
    s2: f64,
    #[output(unit = "m/s", depends_on = ["v2"], initial_depends_on = &STOPS, state, from = v2_start, derivative = "a2", describe = "Secondary sheave speed (state)")]
    v2: f64,
    #[output(unit = "m/s2", depends_on = SHEAVES, initial_depends_on = &INITIAL_A2, describe = "Secondary sheave acceleration")]
    a2: f64,
    #[output(name = "D1", unit = "m", depends_on = ["s2"], initial_depends_on = INITIAL_RATIO, describe = "Primary working diameter")]
    d1: f64,
    #[output(name = "D2", unit = "m", depends_on = ["s2"], initial_depends_on = ["D2_bar", "s2_bar", "c2", "s2_start"], describe = "Secondary working diameter")]
    d2: f64,
    #[output(depends_on = ["s2"], initial_depends_on = INITIAL_RATIO, describe = "D2/D1 = w1/w2")]
    ratio: f64,
    #[output(depends_on = ["s2"], initial_depends_on = ["C", "D1_bar", "D2_bar", "s2_bar", "c1", "c2", "s2_start"], describe = "ds1/ds2 along the belt constraint")]
    ds1_ds2: f64,
    #[output(unit = "J", depends_on = [], initial_depends_on = &INITIAL_IMPACT, describe = "Sheave kinetic energy lost in inelastic stops at the travel limits")]
    energy_impact: f64,
    #[support_torque(depends_on = ROTATION, initial_depends_on = &INITIAL_A1)]
    tau_support: f64,
    #[output(start = FREE, min = AT_LOWER as f64, max = AT_UPPER as f64, depends_on = [], initial_depends_on = &INITIAL_MODE, describe = "0 sheaves free, -1 held at the lower end of the s2 travel, +1 at the upper end")]
    sheave_mode: i32,
}

/// Accelerations at one instant, in the number type of the equations (`f64` for the
/// simulation, [`Dual`] for its exact derivatives).
struct Motion<S> {
    cfg: Configuration<S>,
    /// dw1/dt
    a1: S,
    /// dv2/dt
    a2: S,
    /// Net generalized force on s2 with the sheaves at rest: what presses them onto a stop.
    push: S,
}

/// The knowns the equations of motion read besides the geometry.
struct Knowns<S> {
    j1: S,
    j2: S,
    m1: S,
    m2: S,
    tau_1: S,
    tau_2: S,
    f_1: S,
    f_2: S,
    w1: S,
    /// The sheave speed: 0 while the sheaves are held on a stop.
    v2: S,
}

impl<S: Scalar> Knowns<S> {
    /// Lagrange with q = (phi1, s2), T = (J1 + J2 rho^2) w1^2/2 + (m2 + m1 s1'^2) v2^2/2:
    /// `(J1 + J2 rho^2) a1 + 2 J2 rho rho' v2 w1 = tau_1 + rho tau_2`,
    /// `(m2 + m1 s1'^2) a2 + m1 s1' s1'' v2^2 - J2 rho rho' w1^2 = F_2 + F_1 s1'`.
    fn motion(&self, cfg: Configuration<S>, free: bool) -> Motion<S> {
        let (rho, rho_p, s1p, s1pp) = (cfg.rho, cfg.rho_p, cfg.s1p, cfg.s1pp);
        let (v2, w1) = (self.v2, self.w1);
        let inertia = self.j1 + self.j2 * rho * rho;
        let a1 = (self.tau_1 + rho * self.tau_2 - self.j2 * 2.0 * rho * rho_p * v2 * w1) / inertia;
        let push = self.f_2 + self.f_1 * s1p + self.j2 * rho * rho_p * w1 * w1;
        let mass = self.m2 + self.m1 * s1p * s1p;
        let a2 = if free {
            (push - self.m1 * s1p * s1pp * v2 * v2) / mass
        } else {
            S::constant(0.0)
        };
        Motion { cfg, a1, a2, push }
    }

    /// Kinetic energy of the sheaves moving at `v2`, lost in an inelastic stop.
    fn sheave_energy(&self, cfg: &Configuration<S>, v2: S) -> S {
        (self.m2 + self.m1 * cfg.s1p * cfg.s1p) * 0.5 * v2 * v2
    }

    /// What the housing supplies: the angular momentum is J1 w1 + J2 w2 about parallel axes,
    /// with w2 = rho w1, so dw2/dt = rho a1 + rho' v2 w1.
    fn support_torque(&self, m: &Motion<S>) -> S {
        let c = &m.cfg;
        let a2_rot = c.rho * m.a1 + c.rho_p * self.v2 * self.w1;
        self.j1 * m.a1 + self.j2 * a2_rot - self.tau_1 - self.tau_2
    }
}

/// What a tangent moved: the shape, the belt length, the configuration and the knowns.
struct Moving {
    shape: Shape<Dual>,
    l0: Dual,
    cfg: Configuration<Dual>,
    knowns: Knowns<Dual>,
}

impl Cvt {
    fn free(&self) -> bool {
        self.sheave_mode == FREE
    }

    fn knowns(&self) -> Knowns<f64> {
        Knowns {
            j1: self.j1,
            j2: self.j2,
            m1: self.m1,
            m2: self.m2,
            tau_1: self.tau_1,
            tau_2: self.tau_2,
            f_1: self.f_1,
            f_2: self.f_2,
            w1: self.w1,
            v2: if self.free() { self.v2 } else { 0.0 },
        }
    }

    /// The outputs' and state derivatives' tangent with the sheave speed `v2`; the moving
    /// shape, belt length, configuration and knowns it used (None outside the belt geometry,
    /// where the values are NaN as well).
    fn tangent_with(&self, seed: &Cvt, tangent: &mut Cvt, v2: Dual) -> Option<Moving> {
        let on = self.geometry.solve_s1(self.l0, self.s2)?;
        let shape = self.geometry.along(&seed.geometry);
        let l0 = shape.l0();
        let s2 = Dual::seeded(self.s2, seed.s2);
        let cfg = shape.configuration(s2, shape.on_belt(l0, s2, on.s1));
        let k = self.knowns_along(seed, v2);
        let m = k.motion(cfg, self.free());
        let c = &m.cfg;
        let t = tangent;
        (t.s1, t.d1, t.d2) = (c.s1.eps, c.d1.eps, c.d2.eps);
        (t.ratio, t.ds1_ds2) = ((c.d2 / c.d1).eps, c.s1p.eps);
        t.w2 = (c.rho * k.w1).eps;
        t.v1 = (c.s1p * v2).eps;
        (t.a1, t.a2) = (m.a1.eps, m.a2.eps);
        t.tau_support = k.support_torque(&m).eps;
        t.l0 = l0.eps;
        Some(Moving {
            shape,
            l0,
            cfg: m.cfg,
            knowns: k,
        })
    }

    /// The knowns moving as `seed`'s fields say, the sheave speed as `v2`.
    fn knowns_along(&self, seed: &Cvt, v2: Dual) -> Knowns<Dual> {
        let dual = Dual::seeded;
        Knowns {
            j1: dual(self.j1, seed.j1),
            j2: dual(self.j2, seed.j2),
            m1: dual(self.m1, seed.m1),
            m2: dual(self.m2, seed.m2),
            tau_1: dual(self.tau_1, seed.tau_1),
            tau_2: dual(self.tau_2, seed.tau_2),
            f_1: dual(self.f_1, seed.f_1),
            f_2: dual(self.f_2, seed.f_2),
            w1: dual(self.w1, seed.w1),
            v2: if self.free() { v2 } else { Dual::constant(0.0) },
        }
    }

    fn motion(&self) -> Option<Motion<f64>> {
        let g = self.geometry;
        let cfg = g.configuration(self.s2, g.solve_s1(self.l0, self.s2)?);
        Some(self.knowns().motion(cfg, self.free()))
    }

    /// Kinetic energy of the sheaves, lost in an inelastic stop.
    fn sheave_energy(&self, cfg: &Configuration) -> f64 {
        self.knowns().sheave_energy(cfg, self.v2)
    }

    /// Where the other sheave's limit `s1_limit` puts s2 on the belt, moving with the knowns:
    /// an end of the travel where it binds.
    fn travel_end(&self, shape: &Shape<Dual>, l0: Dual, s1_limit: Dual) -> Option<Dual> {
        let s2 = self.geometry.solve_s2(s1_limit.re, self.geometry.s2_bar)?;
        Some(shape.s2_at(l0, s1_limit, s2))
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

impl fmu_runtime::Equations<f64> for Cvt {
    fn derivatives(&self, _t: f64, dx: &mut [f64]) {
        match self.motion() {
            Some(m) => {
                // der(s2) is the variable v2, which is 0 while the sheaves are held.
                let (s, dx) = (Self::STATE, &mut dx[..Self::STATES]);
                dx[s.phi1] = self.w1;
                dx[s.w1] = m.a1;
                dx[s.phi2] = m.cfg.rho * self.w1;
                dx[s.s2] = self.v2;
                dx[s.v2] = m.a2;
            }
            // Only reachable on a rejected trial step far outside the checked travel: NaN makes
            // the integrator shrink the step or fail, and a failed step restores the state.
            None => dx.fill(f64::NAN),
        }
    }
    fn outputs(&mut self, _t: f64) {
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
            self.tau_support = self.knowns().support_torque(&m);
        }
    }
}

impl Model for Cvt {
    const NAME: &'static str = "CVT";
    const DESCRIPTION: &'static str =
        "Belt CVT: primary and secondary pulleys with movable sheaves tied by the belt length, travel stops";
    const DOCUMENTATION: &'static str = include_str!("../documentation.html");
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(2.0);
    const EVENT_INDICATORS: usize = 2;

    fn initialize(&mut self, _t: f64) -> Result<(), Invalid> {
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
        self.energy_impact = 0.0;
        self.sheave_mode = FREE;
        self.s1 = self
            .geometry
            .solve_s1(self.l0, self.s2)
            .expect("checked by effective_travel")
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

    type Jets = fmu_runtime::Unlifted;

    const PROVIDES_DERIVATIVES: bool = true;

    /// The same equations in dual numbers, in the sheave mode the CVT is in; s1 moves along
    /// the belt constraint by the implicit function theorem (`Shape::on_belt`), the belt
    /// length with the parameters in Initialization Mode.
    fn tangent(&self, _t: f64, seed: &Self, tangent: &mut Self) {
        self.tangent_with(seed, tangent, Dual::seeded(self.v2, seed.v2));
    }

    /// At the start the travel's ends move with the parameters, and the sheaves may have been
    /// stopped on one (and then held, or released): their speed is then 0 whatever v2_start,
    /// and the energy the stop took moves with v2_start and the sheave masses.
    fn initial_tangent(&self, _t: f64, seed: &Self, tangent: &mut Self) {
        let impact = !self.free() || self.energy_impact != 0.0;
        let v2 = if impact {
            Dual::constant(0.0)
        } else {
            Dual::seeded(self.v2, seed.v2)
        };
        let Some(Moving {
            shape,
            l0,
            cfg,
            knowns: k,
        }) = self.tangent_with(seed, tangent, v2)
        else {
            return;
        };
        let dual = Dual::seeded;
        if impact {
            tangent.v2 = 0.0;
            let v2_start = dual(self.v2_start, seed.v2_start);
            tangent.energy_impact = k.sheave_energy(&cfg, v2_start).eps;
        }
        // Each end is its own limit or where the other sheave's limit puts it.
        let (s2_min, s2_max) = (
            dual(self.s2_min, seed.s2_min),
            dual(self.s2_max, seed.s2_max),
        );
        let (s1_min, s1_max) = (
            dual(self.s1_min, seed.s1_min),
            dual(self.s1_max, seed.s1_max),
        );
        if let (Some(lo), Some(hi)) = (
            self.travel_end(&shape, l0, s1_max),
            self.travel_end(&shape, l0, s1_min),
        ) {
            (tangent.s2_lo, tangent.s2_hi) = (s2_min.max(lo).eps, s2_max.min(hi).eps);
        }
    }
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
