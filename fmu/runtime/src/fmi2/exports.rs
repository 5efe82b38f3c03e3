//! The exported C symbols of a component FMU: [`crate::export_fmu!`] writes every function of
//! the FMI 2.0 list ([`fmi_abi::fmi2_functions!`]) as a call of its namesake in [`super::ffi`],
//! and two functions with which the xtask writes modelDescription.xml and the documentation
//! from the binary's own variable table (`drivetrain_fmu_model_description`,
//! `drivetrain_fmu_documentation`, `drivetrain_fmu_free_string`).

/// Exports the whole FMI 2.0 and FMI 3.0 APIs, Co-Simulation and Model Exchange, for a model
/// type, and the texts the xtask packages (both modelDescription.xml files, the documentation).
#[cfg(not(feature = "no-export"))]
#[macro_export]
macro_rules! export_fmu {
    ($model:ty) => {
        #[allow(non_snake_case, clippy::missing_safety_doc)]
        mod fmi2_exports {
            use super::*;
            $crate::fmi_abi::fmi2_functions!($crate::__export_fmi2_functions, $model);
        }

        #[allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]
        mod fmi3_exports {
            use super::*;
            $crate::fmi_abi::fmi3_functions!($crate::__export_fmi3_functions, $model);

            #[no_mangle]
            pub unsafe extern "C" fn drivetrain_fmu_model_description3(
                timestamp: *const ::std::ffi::c_char,
            ) -> *mut ::std::ffi::c_char {
                $crate::__export::ffi3::model_description::<$model>(timestamp)
            }
        }

        #[allow(non_snake_case, clippy::missing_safety_doc)]
        mod fmu_texts {
            use super::*;

            #[no_mangle]
            pub unsafe extern "C" fn drivetrain_fmu_model_description(
                timestamp: *const ::std::ffi::c_char,
            ) -> *mut ::std::ffi::c_char {
                $crate::__export::ffi::model_description::<$model>(timestamp)
            }

            #[no_mangle]
            pub extern "C" fn drivetrain_fmu_documentation() -> *mut ::std::ffi::c_char {
                $crate::__export::ffi::documentation::<$model>()
            }

            #[no_mangle]
            pub unsafe extern "C" fn drivetrain_fmu_free_string(s: *mut ::std::ffi::c_char) {
                $crate::__export::ffi::free_string(s)
            }
        }
    };
}

/// With the feature `no-export` a model exports nothing, so that several models link into one
/// program (the fuzzer, which calls `__export::ffi` for each model itself).
#[cfg(feature = "no-export")]
#[macro_export]
macro_rules! export_fmu {
    ($model:ty) => {};
}

/// One `#[no_mangle]` function per entry of the FMI 2.0 list, for `$model`.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_fmi2_functions {
    (($model:ty) $($symbol:ident $name:ident ($($arg:ident : $ty:ty),*) -> $ret:ty;)*) => {
        $(
            #[no_mangle]
            pub unsafe extern "C" fn $symbol($($arg: $ty),*) -> $ret {
                $crate::__export::ffi::$name::<$model>($($arg),*)
            }
        )*
    };
}
