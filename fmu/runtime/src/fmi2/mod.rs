//! The FMI 2.0 layer: the C ABI ([`ffi`], whose exports [`crate::export_fmu!`] writes), the
//! state machine of an instance ([`instance`], with its [`co_simulation`] and
//! [`model_exchange`] sides), the FMU-state format ([`snapshot`]) and its checked restore ([`restore`]), and the logger
//! ([`logger`]).
//! A model reaches none of it directly: it implements [`crate::Model`], and an FMI 3.0 layer
//! would sit beside this one on the same trait.

pub mod co_simulation;
pub mod exports;
pub mod ffi;
pub mod instance;
pub mod logger;
pub mod model_exchange;
pub mod restore;
pub(crate) mod setters;
pub mod snapshot;
