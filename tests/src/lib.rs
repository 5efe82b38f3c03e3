//! A small FMI 2.0 Co-Simulation importer for tests and benchmarks: unpacks a packaged `.fmu`,
//! reads its modelDescription.xml, loads the binary with libloading and calls it through the
//! C ABI only.

pub mod fmi3;
pub mod implicit;
pub mod importer;
pub mod linear;
pub mod ode;
pub mod scenario;
pub mod sequence;
pub mod state_bytes;
pub mod structure;

// The importer itself, by part: finding the FMUs, loading one, and its instances.
mod fmu;
mod instance;
mod locate;

pub use fmu::{in_process_dir, Fmu};
use instance::record_log;
pub use instance::{FmuState, Instance, LogLine};
pub(crate) use locate::fmu_sources;
pub use locate::{check_fresh, components, fmu_dir, models_under_test, narrowed, ComponentCrate};

use libloading::Library;
use model_description::ModelDescription;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use fmi_abi::fmi2::{CallbackFunctions, Component, ValueReference as Vr};
pub use fmi_abi::fmi2::{
    EventInfo, Status, CO_SIMULATION, DISCARD, ERROR, FATAL, MODEL_EXCHANGE, OK, WARNING,
};

/// The logger as our FMUs call it: format "%s" and the message as the only variadic argument.
/// Defining a variadic function needs an unstable feature; on the SysV x86-64 and AArch64
/// Linux ABIs the first variadic pointer argument arrives exactly like a sixth fixed one, so
/// this function is handed to the FMU as the variadic `fmi2CallbackLogger`.
type FixedLogger = unsafe extern "C" fn(
    *mut c_void,
    *const c_char,
    Status,
    *const c_char,
    *const c_char,
    *const c_char,
);

/// A table of function pointers, named `$table`, from an FMI function list
/// ([`fmi_abi::fmi2_functions!`], [`fmi_abi::fmi3_functions!`]), resolved from the binary.
macro_rules! api {
    (($table:ident) $($symbol:ident $name:ident ($($arg:ident : $ty:ty),*) -> $ret:ty;)*) => {
        /// Every function of the list, resolved from the binary.
        #[allow(clippy::type_complexity)]
        pub struct $table { $(pub $name: unsafe extern "C" fn($($ty),*) -> $ret,)* }
        impl $table {
            unsafe fn load(lib: &Library) -> Result<$table, String> {
                Ok($table { $($name: *lib
                    .get::<unsafe extern "C" fn($($ty),*) -> $ret>(stringify!($symbol).as_bytes())
                    .map_err(|e| format!("{}: {e}", stringify!($symbol)))?,)* })
            }
        }
    };
}
pub(crate) use api;

fmi_abi::fmi2_functions!(api, Api);

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    #[test]
    fn every_component_crate_names_its_model() {
        let components = components().unwrap();
        let names: Vec<(&str, &str)> = components
            .iter()
            .map(|c| (c.crate_name.as_str(), c.model.as_str()))
            .collect();
        assert!(names.contains(&("gear", "Gear")), "{names:?}");
        assert!(names.contains(&("cvt", "CVT")), "{names:?}");
        // The runtime and the shared variable-ratio physics are libraries, not FMUs.
        assert!(!names.iter().any(|(c, _)| *c == "fmu-runtime"), "{names:?}");
    }

    #[test]
    fn a_missing_or_stale_fmu_is_refused() {
        let dir = std::env::temp_dir().join(format!("fmu-fresh-{}", std::process::id()));
        let src = dir.join("src");
        std::fs::create_dir_all(&src).unwrap();
        let source = src.join("lib.rs");
        std::fs::write(&source, "").unwrap();
        let fmu = dir.join("M.fmu");
        let sources = [src.clone()];
        assert!(check_fresh(&fmu, &sources).unwrap_err().contains("M.fmu"));
        std::fs::write(&fmu, "").unwrap();
        let set = |path: &Path, t: SystemTime| {
            std::fs::File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(t)
                .unwrap()
        };
        let now = SystemTime::now();
        set(&source, now);
        set(&fmu, now - Duration::from_secs(10));
        assert!(check_fresh(&fmu, &sources)
            .unwrap_err()
            .contains("older than its sources"));
        set(&fmu, now + Duration::from_secs(10));
        check_fresh(&fmu, &sources).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
