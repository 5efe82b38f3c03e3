//! The FMI 3.0 layer, beside the FMI 2.0 one and on the same instance core
//! ([`crate::instance::Instance`]: life cycle, get and set, FMU state and its checked
//! restore, the Model Exchange event update, the Co-Simulation step) and the same integrator.
//! What FMI 3.0 adds is here: its C ABI ([`ffi`], exported by [`crate::export_fmu!`] beside
//! the FMI 2.0 symbols), Co-Simulation's Event Mode and early return with the intermediate
//! update callback ([`instance`]) and its intermediate variables ([`intermediate`]), the
//! independent variable `time` and one variable per event indicator, which FMI 3.0 requires,
//! after the model's own value references ([`model_description::fmi3_extra`], shared with
//! the FMI 3.0 description).

pub mod exports;
pub mod ffi;
pub mod instance;
pub mod intermediate;
