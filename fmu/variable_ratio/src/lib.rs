//! The compliant variable-ratio transmission: one physics implementation for the
//! VariableRatioTransmission FMU (with shaft inertias) and the VariableRatioCoupling FMU
//! (without). Derivation: `documentation.html` next to this file, shipped by both FMUs.
//!
//! Sign convention (Modelica): `tau_b`, `tau_f` are the torques the base and follower shafts
//! apply to the transmission, positive into it. Then `tau_b w_b + tau_f w_f` is the power
//! flowing into the transmission, which the energy argument below needs.

use fmu_runtime::declare::concat_names;
use fmu_runtime::{Indicators, Invalid, Param, Scalar, Side, Variables, HYSTERESIS};

/// The documentation both FMUs ship.
pub const DOCUMENTATION: &str = include_str!("../documentation.html");

/// Decay rate (1/s) above which BDF beats the explicit Tsit45: Tsit45 would need steps below
/// 3.3/rate = 33 µs for stability alone.
pub const STIFF_RATE: f64 = 1e5;

pub const NO_LOSSES: i32 = 0;
pub const CONSTANT_EFFICIENCY: i32 = 1;

/// Parameters of the compliance and the losses, the seed's defaults. Both FMUs embed them with
/// `#[variables]`. Generic over the number type of the models that embed it (see
/// `fmu_runtime::lift`); `direction` and `losses` are Integers and choose the equations.
#[derive(Debug, Clone, Copy, PartialEq, Variables)]
pub struct Transmission<S: Scalar = f64> {
    #[parameter(
        start = 30000.0,
        unit = "N.m/rad",
        min = 0.0,
        describe = "Transmission stiffness at the base (> 0)"
    )]
    pub k_p: Param<S>,
    #[parameter(
        start = 0.05,
        unit = "N.m.s/rad",
        min = 0.0,
        describe = "Transmission damping at the base (> 0)"
    )]
    pub k_v: Param<S>,
    #[parameter(
        name = "tau_B_start",
        unit = "N.m",
        describe = "Initial base torque; sets the initial compliance phi = -tau_B_start/k_p"
    )]
    pub tau_b_start: Param<S>,
    /// +1: the follower turns with the base; -1: against it.
    #[parameter(start = 1, min = -1.0, max = 1.0, describe = "+1: follower turns in the same direction as the base; -1: opposite")]
    pub direction: i32,
    #[parameter(start = NO_LOSSES, min = 0.0, max = 1.0, describe = "0: no losses; 1: constant efficiency eta with viscous losses")]
    pub losses: i32,
    #[parameter(
        start = 0.95,
        min = 0.0,
        max = 1.0,
        describe = "Mesh efficiency, in (0, 1]"
    )]
    pub eta: Param<S>,
    #[parameter(
        start = 1.0,
        unit = "rad/s",
        min = 0.0,
        describe = "Speed below which the efficiency is regularized towards 1"
    )]
    pub w_th: Param<S>,
    #[parameter(
        name = "mu_B",
        unit = "N.m.s/rad",
        min = 0.0,
        describe = "Viscous friction coefficient at the base shaft"
    )]
    pub mu_b: Param<S>,
    #[parameter(
        name = "mu_F",
        unit = "N.m.s/rad",
        min = 0.0,
        describe = "Viscous friction coefficient at the follower shaft"
    )]
    pub mu_f: Param<S>,
}

// What the torques at the start follow besides the two speeds and the ratio: the compliance
// holds tau_B_start (phi = tau_B_start / k_p) and damps with k_v, each shaft adds its bearing,
// the follower also the mesh losses.
pub const BASE_TORQUE: [&str; 4] = ["k_v", "tau_B_start", "direction", "mu_B"];
const MESH: [&str; 3] = ["losses", "eta", "w_th"];
pub const FOLLOWER_TORQUE: [&str; 7] =
    concat_names(&[&["k_v", "tau_B_start", "direction"], &MESH, &["mu_F"]]);
pub const BOTH_TORQUES: [&str; 8] = concat_names(&[&FOLLOWER_TORQUE, &["mu_B"]]);

/// The compliance angle and what the transmission dissipates: the outputs both FMUs end with.
/// Each FMU says what the losses depend on, and at the start what follows its speeds
/// (`#[variables(depends_on(power_loss) = ..., initial_depends_on(...) = ...)]`).
#[derive(Debug, Clone, Copy, PartialEq, Variables)]
pub struct Compliance<S: Scalar = f64> {
    #[output(unit = "rad", depends_on = ["phi"], initial_depends_on = ["k_p", "tau_B_start"], state, derivative = "phi_dot", describe = "Compliance angle (state), dphi/dt = s r w_F - w_B")]
    pub phi: S,
    #[output(unit = "rad/s", depends_on = ["w_B", "w_F", "r"], describe = "Rate of the compliance angle, s r w_F - w_B")]
    pub phi_dot: S,
    #[output(
        unit = "W",
        describe = "Power dissipated by damping, mesh and bearings"
    )]
    pub power_loss: S,
    #[output(unit = "J", depends_on = ["energy_loss"], initial_depends_on = [], state, derivative = "power_loss", describe = "Energy dissipated since the start (state)")]
    pub energy_loss: S,
    /// Changes only in the event iteration, so it follows no known between events.
    #[output(start = 1, min = -1.0, max = 1.0, depends_on = [], describe = "+1 forward (base drives the follower), -1 reverse")]
    pub power_flow: i32,
}

impl Compliance {
    /// Power flows one way or the other, never none.
    pub fn check(&self) -> Result<(), Invalid> {
        if self.power_flow == 0 {
            return Err(Invalid::new(
                "power_flow",
                0.0,
                "power flows forward (+1) or in reverse (-1)",
            ));
        }
        Ok(())
    }
}

impl<S: Scalar> Compliance<S> {
    /// At the start: the spring holds `tau_B_start` (phi = -tau_B_start/k_p, moving with both
    /// parameters in Initialization Mode), nothing dissipated yet.
    pub fn start(&mut self, t: &Transmission<S>) {
        self.phi = S::param(t.phi_start());
        self.energy_loss = S::constant(0.0);
    }

    /// Takes the rate of the compliance angle and the losses from `q`.
    pub fn follow(&mut self, q: &Torques<S>) {
        self.phi_dot = q.phi_dot;
        self.power_loss = q.power_loss;
    }
}

/// The torques and losses at one instant, in the number type of the equations (`f64` for the
/// simulation, jets for its exact derivatives).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Torques<S: Scalar = f64> {
    /// dphi/dt = s r w_f - w_b
    pub phi_dot: S,
    /// Torque the base applies to the transmission, viscous bearing loss included.
    pub tau_b: S,
    /// Torque the follower applies to the transmission, viscous bearing loss included.
    pub tau_f: S,
    /// Coulomb mesh loss (referred to the follower), tau_Coul tanh(4 w_F / w_th).
    pub tau_loss: S,
    /// Everything dissipated: damping, mesh and bearings.
    pub power_loss: S,
    /// Power-flow indicator: > 0 forward (base drives), < 0 reverse.
    pub flow: S,
}

impl Transmission {
    /// Whether the transmission between inertias `j_b` and `j_f` is stiff at ratio `r` and the
    /// follower torque `tau_f`: whether some rate of decay exceeds [`STIFF_RATE`]. The rates are
    /// the fast root of the overdamped compliance mode (an underdamped one is an oscillation
    /// that any integrator must follow), the bearings' `mu/J`, and the loss regularization
    /// below `w_th`, `|tau_F| (1 - eta) (4/w_th) / J_F`.
    pub fn stiff(&self, j_b: f64, j_f: f64, r: f64, tau_f: f64) -> bool {
        let j_e = 1.0 / (1.0 / j_b + r * r / j_f);
        let a = self.k_v / (2.0 * j_e);
        let w2 = self.k_p / j_e;
        let compliance = if a * a > w2 {
            a + (a * a - w2).sqrt()
        } else {
            0.0
        };
        let loss = if self.losses == CONSTANT_EFFICIENCY {
            tau_f.abs() * (1.0 - self.eta) * 4.0 / self.w_th / j_f
        } else {
            0.0
        };
        let fastest = compliance
            .max(self.mu_b / j_b)
            .max(self.mu_f / j_f)
            .max(loss);
        fastest > STIFF_RATE
    }

    pub fn check(&self) -> Result<(), Invalid> {
        for (name, x) in [("k_p", self.k_p), ("k_v", self.k_v)] {
            if !(x.is_finite() && x > 0.0) {
                return Err(Invalid::new(name, x, "must be positive"));
            }
        }
        if self.direction != 1 && self.direction != -1 {
            return Err(Invalid::new(
                "direction",
                f64::from(self.direction),
                "must be +1 (same) or -1 (opposite)",
            ));
        }
        if self.losses != NO_LOSSES && self.losses != CONSTANT_EFFICIENCY {
            return Err(Invalid::new(
                "losses",
                f64::from(self.losses),
                "must be 0 (none) or 1 (constant efficiency)",
            ));
        }
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return Err(Invalid::new("eta", self.eta, "must be in (0, 1]"));
        }
        if !(self.w_th.is_finite() && self.w_th > 0.0) {
            return Err(Invalid::new("w_th", self.w_th, "must be positive"));
        }
        for (name, x) in [("mu_B", self.mu_b), ("mu_F", self.mu_f)] {
            if !(x.is_finite() && x >= 0.0) {
                return Err(Invalid::new(name, x, "must be >= 0"));
            }
        }
        Ok(())
    }
}

/// The transmission's equations, once for the simulation (`f64`) and its exact derivatives
/// (jets).
impl<S: Scalar> Transmission<S> {
    pub fn s(&self) -> f64 {
        f64::from(self.direction)
    }

    /// The compliance angle at which the spring holds `tau_B_start` at rest.
    pub fn phi_start(&self) -> Param<S> {
        -self.tau_b_start / self.k_p
    }

    /// Equations: `dphi/dt = s r w_f - w_b`, `tau_B = -k_p phi - k_v dphi/dt`,
    /// `s r tau_B + tau_F - tau_loss = 0`, `tau_loss = tau_Coul tanh(4 w_f/w_th)` with
    /// `tau_Coul = |tau_F| (1 - eta)`. With `x = -s r tau_B` the last two give
    /// `tau_F = x / (1 - c sign(x))`, `c = (1 - eta) tanh(4 w_f/w_th)`, with no iteration.
    /// Each product keeps the order of its factors' rounding, so `f64` gives the simulation's
    /// bits; `sign(x)` is constant between its jumps, so its derivative is zero.
    #[inline(always)]
    pub fn torques(&self, phi: S, w_b: S, w_f: S, r: S) -> Torques<S> {
        let s = self.s();
        let phi_dot = r * s * w_f - w_b;
        let tau_spring = -self.k_p * phi - self.k_v * phi_dot;
        let x = r * -s * tau_spring;
        let (tau_mesh, tau_loss) = if self.losses == CONSTANT_EFFICIENCY {
            // The follower speed in both flows: tau_loss works against w_f, so c w_f >= 0 keeps
            // tau_loss w_f = |x| c w_f / (1 - c sign x) >= 0. (The base speed in reverse flow
            // dissipated negatively while s w_b and w_f had opposite signs.)
            let one = S::constant(1.0);
            let c = (one - self.eta) * (w_f * 4.0 / self.w_th).tanh();
            let tau_f = x / (one - c * x.value().signum());
            (tau_f, tau_f - x)
        } else {
            (x, S::constant(0.0))
        };
        let power_loss = self.k_v * phi_dot * phi_dot
            + tau_loss * w_f
            + self.mu_b * w_b * w_b
            + self.mu_f * w_f * w_f;
        Torques {
            phi_dot,
            tau_b: tau_spring + self.mu_b * w_b,
            tau_f: tau_mesh + self.mu_f * w_f,
            tau_loss,
            power_loss,
            // Base power in minus follower power out, on the loss-free torques.
            flow: tau_spring * (w_b + r * s * w_f),
        }
    }
}

/// Checks the ratio input before a step: the seed's block stops with an error for r <= 0.
pub fn check_ratio(r: f64) -> Result<(), Invalid> {
    if r > 0.0 && r.is_finite() {
        Ok(())
    } else {
        Err(Invalid::new("r", r, "the ratio must be positive"))
    }
}

/// The event indicator of the power flow: `flow`, on the side of the mode (hysteresis 1e-12 W).
pub fn power_flow_indicator(z: &mut Indicators, flow: f64, mode: i32) {
    z.set(0, flow, Side::of(mode > 0), HYSTERESIS);
}

/// Sets the power-flow mode after an event to the sign of the indicator `flow` (at exactly zero
/// the flow has not turned yet and keeps its mode); returns whether it changed.
pub fn update_power_flow(mode: &mut i32, flow: f64) -> bool {
    let new = if flow > 0.0 {
        1
    } else if flow < 0.0 {
        -1
    } else {
        *mode
    };
    std::mem::replace(mode, new) != new
}

#[cfg(test)]
mod tests {
    use super::*;
    use fmu_runtime::math::tanh;

    #[test]
    fn energy_argument_fixes_the_signs() {
        // Power into the transmission = stored + dissipated, for any state.
        let t = Transmission {
            losses: CONSTANT_EFFICIENCY,
            eta: 0.8,
            mu_b: 0.01,
            mu_f: 0.02,
            ..Default::default()
        };
        for s in [1, -1] {
            let t = Transmission { direction: s, ..t };
            for (phi, w_b, w_f, r) in [
                (1e-4, 10.0, 4.0, 2.0),
                (-3e-4, -2.0, 1.5, 0.7),
                (2e-5, 0.1, -0.3, 1.3),
            ] {
                let q = t.torques(phi, w_b, w_f, r);
                let p_in = q.tau_b * w_b + q.tau_f * w_f;
                let stored = t.k_p * phi * q.phi_dot;
                assert!(
                    (p_in - stored - q.power_loss).abs() < 1e-9 * (1.0 + p_in.abs()),
                    "s {s}"
                );
            }
        }
    }

    #[test]
    fn mesh_relation_and_tau_coul_hold() {
        let t = Transmission {
            losses: CONSTANT_EFFICIENCY,
            eta: 0.9,
            direction: -1,
            ..Default::default()
        };
        let (phi, w_b, w_f, r) = (2e-4, 5.0, -2.4, 2.0);
        let q = t.torques(phi, w_b, w_f, r);
        let tau_spring = -t.k_p * phi - t.k_v * q.phi_dot;
        // s r tau_B + tau_F - tau_loss = 0 (mesh torques, without the bearings)
        assert!((t.s() * r * tau_spring + q.tau_f - q.tau_loss).abs() < 1e-12);
        let expected = q.tau_f.abs() * (1.0 - t.eta) * tanh(4.0 * w_f / t.w_th);
        assert!((q.tau_loss - expected).abs() < 1e-12);
    }

    #[test]
    fn stiffness_is_the_fastest_decay_rate() {
        let t = Transmission::default();
        let (j_b, j_f) = (0.01, 0.02);
        // The defaults: a 338 Hz oscillation, damping ratio 0.0018. Not stiff.
        assert!(!t.stiff(j_b, j_f, 1.0, 10.0));
        // k_v = 1e4: overdamped, fast root ~ k_v/J_e = 1.5e6 1/s.
        assert!(Transmission { k_v: 1e4, ..t }.stiff(j_b, j_f, 1.0, 0.0));
        // k_v = 100: fast root ~ 1.5e4 1/s, explicit is fine.
        assert!(!Transmission { k_v: 100.0, ..t }.stiff(j_b, j_f, 1.0, 0.0));
        // Heavy bearings, or a sharp loss regularization under a large torque.
        assert!(Transmission { mu_b: 2e3, ..t }.stiff(j_b, j_f, 1.0, 0.0));
        let sharp = Transmission {
            losses: CONSTANT_EFFICIENCY,
            w_th: 1e-3,
            ..t
        };
        assert!(sharp.stiff(j_b, j_f, 1.0, 100.0));
        assert!(!sharp.stiff(j_b, j_f, 1.0, 1e-3));
        // Stiff when a rate exceeds 1e5 1/s, not when it equals it: mu_B/J_B = 5e4/0.5.
        assert!(!Transmission { mu_b: 5e4, ..t }.stiff(0.5, j_f, 1.0, 0.0));
        assert!(Transmission {
            mu_b: 5.0001e4,
            ..t
        }
        .stiff(0.5, j_f, 1.0, 0.0));
    }

    #[test]
    fn losses_never_feed_energy_in() {
        // Every sign combination of torque and speeds, both directions, around and far above
        // w_th: in particular s w_b and w_f of opposite signs during a transient, where the
        // power flows in reverse.
        let t = Transmission {
            losses: CONSTANT_EFFICIENCY,
            eta: 0.85,
            w_th: 0.5,
            ..Default::default()
        };
        let values = [-30.0, -1.0, -0.2, -1e-3, 0.0, 1e-3, 0.2, 1.0, 30.0];
        for s in [1, -1] {
            let t = Transmission { direction: s, ..t };
            for &phi in &[-1e-3, -1e-5, 0.0, 1e-5, 1e-3] {
                for &w_b in &values {
                    for &w_f in &values {
                        for r in [0.5, 1.0, 2.0] {
                            let q = t.torques(phi, w_b, w_f, r);
                            let mesh = q.tau_loss * w_f;
                            assert!(mesh >= 0.0, "s {s} phi {phi} w_b {w_b} w_f {w_f}: {mesh}");
                            assert!(q.power_loss >= 0.0);
                        }
                    }
                }
            }
        }
    }
}
