//! The FMI 2.0 C ABI: every fmi2* function ([`ffi`]), translating FMI 2.0's names and types to
//! the instance core ([`crate::instance`]), and the exports [`crate::export_fmu!`] writes with
//! them ([`exports`]). The FMI 3.0 ABI sits beside it on the same core ([`crate::fmi3`]).

pub mod exports;
pub mod ffi;
