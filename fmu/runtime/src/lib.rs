//! The FMI 2.0 and FMI 3.0 runtime, Co-Simulation and Model Exchange, shared by every component
//! FMU.
//!
//! A component crate declares its variables once, on its fields (`#[derive(Variables)]`),
//! implements [`Model`] (its equations), and calls
//! [`export_fmu!`]; everything FMI lives here.

extern crate self as fmu_runtime;

pub mod declare;
pub mod dual;
pub mod jet;
pub mod lift;
pub mod math;
mod model;
mod ode;
mod variables;

pub use declare::Variables;
pub use dual::{Param, Scalar};
/// The FMI C types and function list, for the exports `export_fmu!` writes in a component.
pub use fmi_abi;
/// `#[derive(Variables)]`: see the `fmu-declare` crate.
pub use fmu_declare::Variables;
pub use jet::{Fixed, Jet, Moving};
pub use lift::{Equations, Unlifted};
pub use model::{Experiment, Indicators, Invalid, Model, Side, HYSTERESIS, ROOT_TIME_TOLERANCE};
pub use variables::{Access, Causality, Initial, Var, Variability};
mod abi;
mod describe;
mod export;
mod fmi2;
mod fmi3;
mod instance;
mod logger;
#[cfg(test)]
mod test_models;
pub mod testing;

/// What `export_fmu!` expands to calls; not for models.
#[doc(hidden)]
pub mod __export {
    pub mod texts {
        pub use crate::export::{
            documentation, free_string, model_description, model_description3,
        };
    }
    pub use crate::fmi2::ffi;
    pub use crate::fmi3::ffi as ffi3;
}
