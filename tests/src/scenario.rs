//! The reference scenarios of `reference-fmus/`: input tables, parameters and settings, read
//! as the validation's importers read them (`files`), and set on an instance.

mod files;

pub use files::{read_table, scenarios_in, Scenario};

use crate::{Instance, OK};
use model_description::VariableType;
use std::path::Path;

/// The reference scenarios of `model` in `reference-fmus/`: the main one, then the others.
pub fn scenarios(model: &str) -> Vec<Scenario> {
    scenarios_in(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../reference-fmus"),
        model,
    )
}

impl Scenario {
    pub fn set_inputs(&self, inst: &impl SetByName, t: f64) {
        for (n, v, integer) in self.typed_inputs_at(t) {
            let status = if integer {
                inst.set_int_by_name(n, v as i32)
            } else {
                inst.set_by_name(n, v)
            };
            assert_eq!(status, OK, "{n} = {v} at t = {t}: {}", inst.log());
        }
    }

    pub fn set_parameters(&self, inst: &Instance) {
        for (n, v) in &self.params {
            let integer = inst
                .fmu
                .md
                .model_variables
                .iter()
                .any(|x| &x.name == n && matches!(x.kind, VariableType::Integer { .. }));
            let status = if integer {
                inst.set_int(n, *v as i32)
            } else {
                inst.set(n, *v)
            };
            assert_eq!(status, OK, "{n}");
        }
    }
}

/// An FMI 2.0 or FMI 3.0 instance whose Reals and Integers are set by name (statuses are
/// c_int with OK = 0 in both).
pub trait SetByName {
    fn set_by_name(&self, name: &str, value: f64) -> std::os::raw::c_int;
    fn set_int_by_name(&self, name: &str, value: i32) -> std::os::raw::c_int;
    fn log(&self) -> String;
}

/// Both instance types name the calls alike (`set`, `set_int`, `log_text`).
macro_rules! set_by_name {
    ($($instance:ty),*) => {$(
        impl SetByName for $instance {
            fn set_by_name(&self, name: &str, value: f64) -> std::os::raw::c_int {
                self.set(name, value)
            }
            fn set_int_by_name(&self, name: &str, value: i32) -> std::os::raw::c_int {
                self.set_int(name, value)
            }
            fn log(&self) -> String {
                self.log_text()
            }
        }
    )*};
}
set_by_name!(Instance<'_>, crate::fmi3::Instance3<'_>);
