//! What the runs need of an instance, the same for FMI 2.0 and 3.0 through the fmi crate: the
//! variables by name (from the model description fmi-schema parsed), values set and got by
//! value reference, and the counts of states and event indicators.

use crate::scenario::Value;
use fmi::fmi2::import::Fmi2Import;
use fmi::fmi3::import::Fmi3Import;
use fmi::schema::fmi2::ScalarVariableElement;
use fmi::schema::fmi3::{AbstractVariableTrait, VariableDependency};
use fmi::traits::FmiImport;
use std::collections::HashMap;

/// A variable as the runs address it.
#[derive(Clone, Copy, Debug)]
pub struct Port {
    pub vr: u32,
    pub kind: Kind,
}

/// A variable's type, as far as the reference scenarios use them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Real,
    Integer,
    Boolean,
}

/// The model description as the runs use it.
pub struct Layout {
    pub ports: HashMap<String, Port>,
    pub states: usize,
    pub indicators: usize,
}

impl Layout {
    pub fn port(&self, name: &str) -> Result<Port, String> {
        self.ports
            .get(name)
            .copied()
            .ok_or_else(|| format!("no variable {name} in the model description"))
    }

    pub fn of_fmi2(import: &Fmi2Import) -> Layout {
        let md = import.model_description();
        let ports = md
            .get_model_variables()
            .map(|v| {
                let kind = match v.elem {
                    ScalarVariableElement::Integer(_) => Kind::Integer,
                    ScalarVariableElement::Boolean(_) => Kind::Boolean,
                    _ => Kind::Real,
                };
                (
                    v.name.clone(),
                    Port {
                        vr: v.value_reference,
                        kind,
                    },
                )
            })
            .collect();
        Layout {
            ports,
            states: md.num_states(),
            indicators: md.num_event_indicators(),
        }
    }

    pub fn of_fmi3(import: &Fmi3Import) -> Layout {
        let md = import.model_description();
        let vars = &md.model_variables;
        let integers: Vec<&str> = vars.int32().iter().map(|v| v.name()).collect();
        let booleans: Vec<&str> = vars.boolean().iter().map(|v| v.name()).collect();
        let ports = vars
            .iter_abstract()
            .map(|v| {
                let kind = if integers.contains(&v.name()) {
                    Kind::Integer
                } else if booleans.contains(&v.name()) {
                    Kind::Boolean
                } else {
                    Kind::Real
                };
                (
                    v.name().to_string(),
                    Port {
                        vr: v.value_reference(),
                        kind,
                    },
                )
            })
            .collect();
        let count = |f: fn(&VariableDependency) -> bool| {
            md.model_structure.unknowns.iter().filter(|u| f(u)).count()
        };
        Layout {
            ports,
            states: count(|u| matches!(u, VariableDependency::ContinuousStateDerivative(_))),
            indicators: count(|u| matches!(u, VariableDependency::EventIndicator(_))),
        }
    }
}

/// Values set and got by value reference, whatever the FMI version.
pub trait Access {
    fn set(&mut self, port: Port, value: Value) -> Result<(), String>;
    /// The value of a Real, Integer or Boolean variable as a Real.
    fn get(&mut self, port: Port) -> Result<f64, String>;
}

pub fn checked<T, E: std::fmt::Debug>(what: &str, r: Result<T, E>) -> Result<T, String> {
    r.map_err(|e| format!("{what}: {e:?}"))
}

/// A Boolean as either version returns it (fmi2Boolean is an int), as a Real.
trait IntoReal {
    fn into_real(self) -> f64;
}

impl IntoReal for i32 {
    fn into_real(self) -> f64 {
        self.into()
    }
}

impl IntoReal for bool {
    fn into_real(self) -> f64 {
        u8::from(self).into()
    }
}

/// [`Access`] for instance types of one version: the version's getter and setter trait, its name in
/// messages, its Real and Integer calls and its Boolean `false`.
macro_rules! access {
    ([$($ty:ty),+], $calls:path, $fmi:literal, $set_real:ident, $get_real:ident, $set_int:ident,
     $get_int:ident, $false:expr) => {
        $(impl Access for $ty {
            fn set(&mut self, port: Port, value: Value) -> Result<(), String> {
                use $calls;
                let what = format!("{}Set value reference {} = {value:?}", $fmi, port.vr);
                let vr = &[port.vr];
                match (value, port.kind) {
                    (Value::Integer(v), Kind::Integer) => checked(&what, self.$set_int(vr, &[v])),
                    (Value::Real(v), Kind::Real) => checked(&what, self.$set_real(vr, &[v])),
                    (Value::Integer(v), Kind::Real) => {
                        checked(&what, self.$set_real(vr, &[v.into()]))
                    }
                    _ => Err(format!("{what}: not a {:?}", port.kind)),
                }
                .map(|_| ())
            }

            fn get(&mut self, port: Port) -> Result<f64, String> {
                use $calls;
                let what = format!("{}Get value reference {}", $fmi, port.vr);
                let vr = &[port.vr];
                match port.kind {
                    Kind::Real => {
                        let mut v = [0.0];
                        checked(&what, self.$get_real(vr, &mut v)).map(|_| v[0])
                    }
                    Kind::Integer => {
                        let mut v = [0];
                        checked(&what, self.$get_int(vr, &mut v)).map(|_| v[0].into())
                    }
                    Kind::Boolean => {
                        let mut v = [$false];
                        checked(&what, self.get_boolean(vr, &mut v)).map(|_| v[0].into_real())
                    }
                }
            }
        })+
    };
}
access!(
    [
        fmi::fmi2::instance::InstanceCS,
        fmi::fmi2::instance::InstanceME
    ],
    fmi::fmi2::instance::Common,
    "fmi2",
    set_real,
    get_real,
    set_integer,
    get_integer,
    0
);
access!(
    [
        fmi::fmi3::instance::InstanceCS,
        fmi::fmi3::instance::InstanceME
    ],
    fmi::fmi3::GetSet,
    "fmi3",
    set_float64,
    get_float64,
    set_int32,
    get_int32,
    false
);
