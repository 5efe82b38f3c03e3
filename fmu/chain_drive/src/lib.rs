//! ChainDrive: the thesis's planar half-bike (drive sprocket on the fixed centre assembly, swing
//! arm on its pivot with a suspension, rear wheel with its sprocket) joined by a chain whose runs
//! pull but never push, with three chain models selected by `chain_model`:
//! 1 full elastic, 2 quasi-steady-state (QSS), 3 inextensible with a slack mode and impacts.
//!
//! Equations and derivation: `documentation.html` next to this file (it ships in the FMU).

mod dependencies;
mod equations;
pub mod geometry;
mod half_bike;
mod model;

use dependencies::*;
use fmu_runtime::{export_fmu, Param, Scalar, Variables};
pub use half_bike::{HalfBike, BOTH, FREE, LOWER, UPPER};

pub const FULL: i32 = 1;
pub const QSS: i32 = 2;
pub const INEXTENSIBLE: i32 = 3;

/// The drive: the half-bike's parameters, the chain model and its mode, the inputs, the states
/// and every output. Generic over its number type: `ChainDrive<f64>` is the simulation,
/// `ChainDrive<Jet<N>>` the same equations giving its Jacobian (`fmu_runtime::lift`).
#[derive(Debug, Clone, Variables)]
pub struct ChainDrive<S: Scalar = f64> {
    #[variables]
    bike: HalfBike<S>,
    #[parameter(start = FULL, min = 1.0, max = 3.0, describe = "1 full elastic, 2 quasi-steady-state, 3 inextensible")]
    chain_model: i32,
    #[parameter(unit = "rad", describe = "Initial swing-arm angle")]
    theta_sa_start: Param<S>,
    #[parameter(
        unit = "rad/s",
        describe = "Initial wheel speed (the drive sprocket starts at r_ws/r_ds times it)"
    )]
    w_rw_start: Param<S>,
    #[input(
        unit = "N.m",
        describe = "Engine torque on the drive sprocket (positive drives the bike forward and tightens the upper run)"
    )]
    tau_eng: S,
    #[input(
        unit = "N.m",
        describe = "Road torque on the rear wheel, positive forward (a resistance is negative); reacts on the ground"
    )]
    tau_load: S,
    #[input(
        unit = "N.m.s/rad",
        min = 0.0,
        describe = "Brake coefficient (>= 0): brake torque -c_brake w_rw on the wheel, reacting on the swing arm"
    )]
    c_brake: S,
    #[output(
        name = "theta_ds",
        index = 0,
        depends_on = THETA_DS,
        initial_depends_on = &INITIAL_RUNS,
        unit = "rad",
        state,
        angle,
        derivative = "w_ds",
        describe = "Drive sprocket angle, positive forward (state; algebraic in the QSS model)"
    )]
    #[output(
        name = "theta_sa",
        index = 1,
        depends_on = THETA_SA,
        initial_depends_on = &INITIAL_POSE,
        unit = "rad",
        state,
        derivative = "w_sa",
        describe = "Swing-arm angle, positive wheel up (state; algebraic in the QSS model)"
    )]
    #[output(
        name = "theta_rw",
        index = 2,
        depends_on = ["theta_rw"],
        initial_depends_on = [],
        unit = "rad",
        state,
        angle,
        derivative = "w_rw",
        describe = "Wheel angle relative to the swing arm, positive forward (state)"
    )]
    q: [S; 3],
    #[output(
        name = "w_ds",
        index = 0,
        depends_on = W_DS,
        initial_depends_on = ["r_ds", "r_ws", "w_rw_start"],
        unit = "rad/s",
        state,
        derivative = "a_ds",
        describe = "Drive sprocket speed"
    )]
    #[output(
        name = "w_sa",
        index = 1,
        depends_on = ["w_sa"],
        initial_depends_on = [],
        unit = "rad/s",
        state,
        derivative = "a_sa",
        describe = "Swing-arm speed (0 in the QSS model)"
    )]
    #[output(
        name = "w_rw",
        index = 2,
        depends_on = ["w_rw"],
        initial_depends_on = ["w_rw_start"],
        unit = "rad/s",
        state,
        derivative = "a_rw",
        describe = "Wheel speed relative to the swing arm"
    )]
    w: [S; 3],
    #[output(name = "a_ds", index = 0, unit = "rad/s2", depends_on = DYNAMIC, initial_depends_on = &INITIAL_DYNAMICS, describe = "Drive sprocket acceleration")]
    #[output(name = "a_sa", index = 1, unit = "rad/s2", depends_on = DYNAMIC, initial_depends_on = &INITIAL_DYNAMICS, describe = "Swing-arm acceleration")]
    #[output(name = "a_rw", index = 2, unit = "rad/s2", depends_on = DYNAMIC, initial_depends_on = &INITIAL_DYNAMICS, describe = "Wheel acceleration relative to the swing arm")]
    a: [S; 3],
    #[output(unit = "rad", depends_on = THETA_WHEEL, initial_depends_on = &INITIAL_POSE, describe = "Absolute wheel angle theta_sa + theta_rw")]
    theta_wheel: S,
    #[output(unit = "rad/s", depends_on = ["w_sa", "w_rw"], initial_depends_on = ["w_rw_start"], describe = "Absolute wheel speed w_sa + w_rw")]
    w_wheel: S,
    #[output(name = "T_upper", unit = "N", depends_on = DYNAMIC, initial_depends_on = &INITIAL_DYNAMICS, describe = "Tension of the upper run (>= 0)")]
    t_u: S,
    #[output(name = "T_lower", unit = "N", depends_on = DYNAMIC, initial_depends_on = INITIAL_WHEEL_TORQUES, describe = "Tension of the lower run (>= 0)")]
    t_l: S,
    #[output(name = "e_upper", unit = "m", depends_on = GEOMETRY, initial_depends_on = &INITIAL_RUNS, describe = "Extension of the upper run (negative: slack)")]
    e_u: S,
    #[output(name = "e_lower", unit = "m", depends_on = GEOMETRY, initial_depends_on = &INITIAL_RUNS, describe = "Extension of the lower run (negative: slack)")]
    e_l: S,
    #[output(unit = "N.m", depends_on = DYNAMIC, initial_depends_on = &INITIAL_DYNAMICS, describe = "Torque of the chain on the drive sprocket, r_ds (T_lower - T_upper)")]
    tau_chain_ds: S,
    #[output(unit = "N.m", depends_on = DYNAMIC, initial_depends_on = &INITIAL_DYNAMICS, describe = "Torque of the chain on the wheel sprocket, r_ws (T_upper - T_lower)")]
    tau_chain_rw: S,
    #[output(unit = "N.m", depends_on = DYNAMIC, initial_depends_on = &INITIAL_DYNAMICS, describe = "Moment of the chain about the pivot on swing arm and wheel together (squat moment), positive lifting the wheel")]
    tau_chain_sa: S,
    #[output(name = "chain_mode", start = FREE, min = LOWER as f64, max = BOTH as f64, depends_on = [], initial_depends_on = &INITIAL_MODE, describe = "Taut run: 1 upper, -1 lower, 0 none (slack), 2 both (full model)")]
    mode: i32,
    #[output(unit = "J", depends_on = W_DS, initial_depends_on = ["J_ds", "J_rw", "r_ds", "r_ws", "w_rw_start"], describe = "Kinetic energy of sprocket, swing arm and wheel")]
    energy_kinetic: S,
    #[output(unit = "J", depends_on = THETA_SA, initial_depends_on = &INITIAL_POSE, describe = "Potential energy in gravity, 0 at theta_sa_ref")]
    energy_gravity: S,
    #[output(unit = "J", depends_on = THETA_SA, initial_depends_on = &INITIAL_POSE, describe = "Potential energy of the suspension, 0 at theta_sa_ref")]
    energy_suspension: S,
    #[output(unit = "J", depends_on = GEOMETRY, initial_depends_on = &INITIAL_CHAIN_ENERGY, describe = "Elastic energy of the chain (0 in the inextensible model)")]
    energy_chain: S,
    #[output(unit = "W", depends_on = DISSIPATION, initial_depends_on = ["r_ds", "r_ws", "gamma_ds", "gamma_rw", "w_rw_start", "c_brake"], describe = "Power dissipated by friction, damping and the brake")]
    power_dissipated: S,
    #[output(
        unit = "J",
        depends_on = ["energy_dissipated"],
        initial_depends_on = [],
        state,
        derivative = "power_dissipated",
        describe = "Energy dissipated since the start, impacts included (state)"
    )]
    energy_dissipated: S,
    #[output(unit = "J", min = 0.0, depends_on = [], initial_depends_on = [], describe = "Energy lost in the impacts of the inextensible chain taking up its slack")]
    energy_impact: S,
    #[output(min = 0.0, depends_on = [], initial_depends_on = [], describe = "Impacts of the inextensible chain since the start")]
    impact_count: i32,
    #[calculated_parameter(
        name = "I_sa",
        initial_depends_on = ["J_sa", "m_sa", "m_rw", "l_sa", "d_sa"],
        unit = "kg.m2",
        describe = "Inertia of swing arm and wheel mass about the pivot, J_sa + m_sa d_sa^2 + m_rw l_sa^2"
    )]
    i_sa: Param<S>,
    #[calculated_parameter(
        name = "G_sa",
        initial_depends_on = ["m_sa", "m_rw", "l_sa", "d_sa", "g"],
        unit = "N.m",
        describe = "Gravity moment amplitude g (m_sa d_sa + m_rw l_sa)"
    )]
    g_sa: Param<S>,
    #[calculated_parameter(
        name = "L_upper_0",
        initial_depends_on = &INITIAL_LENGTH,
        unit = "m",
        describe = "Upper-run length at which it goes taut (lengths between material marks)"
    )]
    l_u0: Param<S>,
    #[calculated_parameter(
        name = "L_lower_0",
        initial_depends_on = &INITIAL_SLACK_LENGTH,
        unit = "m",
        describe = "Lower-run length at which it goes taut"
    )]
    l_l0: Param<S>,
}

export_fmu!(ChainDrive);
