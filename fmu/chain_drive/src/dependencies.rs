//! Which knowns each output and state derivative follows, after initialization and at the
//! start (the model description's dependencies, checked by the dependency probe).

use fmu_runtime::declare::concat_names;

pub(crate) const DYNAMIC: &[&str] = &[
    "theta_ds", "theta_sa", "theta_rw", "w_ds", "w_sa", "w_rw", "tau_eng", "tau_load", "c_brake",
];
// The QSS model solves the sprocket and swing-arm angles from the torques (the brake's through
// w_rw) and the sprocket speed from the wheel's through the chain: the outputs that read them
// follow those knowns too.
pub(crate) const THETA_SA: &[&str] = &["theta_sa", "w_rw", "tau_eng", "tau_load", "c_brake"];
pub(crate) const THETA_DS: &[&str] = &[
    "theta_ds", "theta_sa", "theta_rw", "w_rw", "tau_eng", "tau_load", "c_brake",
];
pub(crate) const THETA_WHEEL: &[&str] = &[
    "theta_sa", "theta_rw", "w_rw", "tau_eng", "tau_load", "c_brake",
];
/// The run lengths: every angle.
pub(crate) const GEOMETRY: &[&str] = THETA_DS;
pub(crate) const W_DS: &[&str] = &["theta_sa", "w_ds", "w_sa", "w_rw"];
pub(crate) const DISSIPATION: &[&str] = &[
    "theta_ds", "theta_sa", "theta_rw", "w_ds", "w_sa", "w_rw", "c_brake",
];

// At the start the swing arm and wheel are at rest relative to each other (w_sa = 0) and every
// chain run just reaches its rest length (plus the slack), so the full and inextensible models
// start without tension; the QSS model solves the pose and the tensions from the torques, the
// inertias (the wheel's acceleration loads the chain) and the wheel's start speed.
pub(crate) const INITIAL_POSE: [&str; 22] = [
    "J_ds",
    "J_rw",
    "m_sa",
    "m_rw",
    "l_sa",
    "d_sa",
    "r_ds",
    "r_ws",
    "ds_x",
    "ds_z",
    "g",
    "k_susp",
    "tau_preload",
    "theta_sa_ref",
    "gamma_ds",
    "gamma_rw",
    "chain_model",
    "theta_sa_start",
    "w_rw_start",
    "tau_eng",
    "tau_load",
    "c_brake",
];
/// The sprocket angle and the runs' extensions also follow the chain's stretch and slack.
pub(crate) const INITIAL_RUNS: [&str; 24] = concat_names(&[&INITIAL_POSE, &["k_chain", "slack"]]);
/// The accelerations and the chain's loads also follow the swing arm's inertia.
pub(crate) const INITIAL_DYNAMICS: [&str; 23] = concat_names(&[&INITIAL_POSE, &["J_sa"]]);
/// Which run is taut also follows the chain's damping.
pub(crate) const INITIAL_MODE: [&str; 24] = concat_names(&[&INITIAL_DYNAMICS, &["c_chain"]]);
/// The torque balance of sprocket and wheel alone (the QSS lower run).
pub(crate) const INITIAL_WHEEL_TORQUES: &[&str] = &[
    "J_ds",
    "J_rw",
    "r_ds",
    "r_ws",
    "gamma_ds",
    "gamma_rw",
    "chain_model",
    "w_rw_start",
    "tau_eng",
    "tau_load",
    "c_brake",
];
pub(crate) const INITIAL_CHAIN_ENERGY: [&str; 12] =
    concat_names(&[INITIAL_WHEEL_TORQUES, &["k_chain"]]);
/// The run lengths at the start pose.
pub(crate) const INITIAL_LENGTH: [&str; 6] =
    ["l_sa", "r_ds", "r_ws", "ds_x", "ds_z", "theta_sa_start"];
pub(crate) const INITIAL_SLACK_LENGTH: [&str; 7] = concat_names(&[&INITIAL_LENGTH, &["slack"]]);
