//! What a component exports: [`crate::export_fmu!`] writes the FMI 2.0 and FMI 3.0 symbols
//! (each version's list through its layer's macro) and the texts with which the xtask writes
//! both modelDescription.xml files and the documentation from the binary's own variable table
//! (`drivetrain_fmu_model_description`, `drivetrain_fmu_model_description3`,
//! `drivetrain_fmu_documentation`, freed with `drivetrain_fmu_free_string`).

use crate::describe;
use crate::model::Model;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Exports the whole FMI 2.0 and FMI 3.0 APIs, Co-Simulation and Model Exchange, for a model
/// type, and the texts the xtask packages (both modelDescription.xml files, the documentation).
#[cfg(not(feature = "no-export"))]
#[macro_export]
macro_rules! export_fmu {
    ($model:ty) => {
        // A dependency that names no variable of the model fails the build here.
        const _: () = $crate::declare::check_dependencies::<$model>();

        // The component's unit tests call the model and the runtime themselves: their build
        // leaves the symbols out rather than compile them a second time.
        #[cfg(not(test))]
        #[allow(non_snake_case, clippy::missing_safety_doc)]
        mod fmi2_exports {
            use super::*;
            $crate::fmi_abi::fmi2_functions!($crate::__export_fmi2_functions, $model);
        }

        #[cfg(not(test))]
        #[allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]
        mod fmi3_exports {
            use super::*;
            $crate::fmi_abi::fmi3_functions!($crate::__export_fmi3_functions, $model);
        }

        #[cfg(not(test))]
        #[allow(non_snake_case, clippy::missing_safety_doc)]
        mod fmu_texts {
            use super::*;

            #[no_mangle]
            pub unsafe extern "C" fn drivetrain_fmu_model_description(
                timestamp: *const ::std::ffi::c_char,
            ) -> *mut ::std::ffi::c_char {
                $crate::__export::texts::model_description::<$model>(timestamp)
            }

            #[no_mangle]
            pub unsafe extern "C" fn drivetrain_fmu_model_description3(
                timestamp: *const ::std::ffi::c_char,
            ) -> *mut ::std::ffi::c_char {
                $crate::__export::texts::model_description3::<$model>(timestamp)
            }

            #[no_mangle]
            pub extern "C" fn drivetrain_fmu_documentation() -> *mut ::std::ffi::c_char {
                $crate::__export::texts::documentation::<$model>()
            }

            #[no_mangle]
            pub unsafe extern "C" fn drivetrain_fmu_free_string(s: *mut ::std::ffi::c_char) {
                $crate::__export::texts::free_string(s)
            }
        }
    };
}

/// With the feature `no-export` a model exports nothing, so that several models link into one
/// program (the fuzzer, which calls `__export::ffi` for each model itself).
#[cfg(feature = "no-export")]
#[macro_export]
macro_rules! export_fmu {
    ($model:ty) => {
        const _: () = $crate::declare::check_dependencies::<$model>();
    };
}

/// The generationDateAndTime the xtask passes (NULL: the epoch).
unsafe fn timestamp(timestamp: *const c_char) -> String {
    match timestamp.as_ref() {
        Some(_) => CStr::from_ptr(timestamp).to_string_lossy().into_owned(),
        None => "1970-01-01T00:00:00Z".into(),
    }
}

/// The FMI 2.0 modelDescription.xml as a C string (free it with [`free_string`]); NULL if it
/// could not be written.
///
/// # Safety
/// `stamp` is NULL or a NUL-terminated string.
pub unsafe fn model_description<M: Model>(stamp: *const c_char) -> *mut c_char {
    let stamp = timestamp(stamp);
    to_c(|| describe::model_description::<M>(&stamp).to_xml())
}

/// The FMI 3.0 modelDescription.xml, as [`model_description()`].
///
/// # Safety
/// `stamp` is NULL or a NUL-terminated string.
pub unsafe fn model_description3<M: Model>(stamp: *const c_char) -> *mut c_char {
    let stamp = timestamp(stamp);
    to_c(|| describe::model_description::<M>(&stamp).to_fmi3_xml())
}

/// documentation/index.html as a C string (free it with [`free_string`]).
pub fn documentation<M: Model>() -> *mut c_char {
    to_c(describe::documentation::<M>)
}

/// A text made without unwinding into the caller, as a C string (NULL on failure).
fn to_c(text: impl FnOnce() -> String) -> *mut c_char {
    catch_unwind(AssertUnwindSafe(|| {
        CString::new(text()).map_or(std::ptr::null_mut(), CString::into_raw)
    }))
    .unwrap_or(std::ptr::null_mut())
}

/// # Safety
/// `s` is NULL or came from one of the functions above.
pub unsafe fn free_string(s: *mut c_char) {
    if !s.is_null() {
        drop(CString::from_raw(s));
    }
}
