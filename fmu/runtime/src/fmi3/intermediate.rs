//! Intermediate Update Mode with intermediate variables (FMI 3.0, section 4.2.2): which
//! variables an importer required at instantiation, what it may call inside one intermediate
//! update callback, and the checks of those calls.
//!
//! The intermediate variables are the continuous inputs and outputs
//! ([`crate::variables::Var::is_intermediate`], declared `intermediateUpdate="true"`). With
//! some of them required, every callback allows gets (`intermediateVariableGetAllowed`), and
//! asks for sets (`intermediateVariableSetRequested`) when an input is among them. Without
//! any, the callback serves early return only and every call from it is refused.

use super::instance::Instance3;
use crate::model::Model;
use crate::variables::{Causality, Var};
use model_description::fmi3_extra::{indicator_name, Extra, TIME};

/// Who may use an instance now, as its C ABI handle records it: a call from inside a callback
/// finds the instance in one of the last three.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// No call is running.
    Free,
    /// A call is running (the importer's logger may call in): refused without a word, since the
    /// instance cannot be touched, not even to log through it.
    Busy,
    /// Inside the intermediate update callback of a step without intermediate variables: the
    /// integrator holds the instance, and every call is refused with a logged reason.
    Sealed,
    /// Inside the intermediate update callback with intermediate variables: the step is paused
    /// between internal steps, and the calls of Intermediate Update Mode ([`allowed`]) run.
    Open,
}

/// The C ABI functions Intermediate Update Mode allows, FMI 3.0.2 section 4.2.2's list of
/// "Allowed Function Calls" there: `fmi3Get{VariableType}` and `fmi3GetOutputDerivatives` of
/// the intermediate variables, `fmi3Set{VariableType}` of the intermediate inputs; their value
/// references are checked by [`Instance3::intermediate_access`]. Every other function, the
/// dependency queries included (3.0.2 lists them in no state's calls there), returns
/// fmi3Error: "a function call not allowed in the current state ... must return fmi3Error"
/// (section 2.2.3).
pub(crate) fn allowed(function: &str) -> bool {
    matches!(
        function,
        "fmi3GetFloat64"
            | "fmi3GetInt32"
            | "fmi3SetFloat64"
            | "fmi3SetInt32"
            | "fmi3GetOutputDerivatives"
    )
}

/// The intermediate variables an importer required (`requiredIntermediateVariables`).
pub struct Required {
    /// By value reference.
    by_vr: Vec<bool>,
    /// Whether an input is among them: then every callback asks for sets.
    pub inputs: bool,
}

impl Required {
    /// The value references `vrs` of `vars`, if every one names a variable declared
    /// `intermediateUpdate="true"`; otherwise why not, naming the first that does not.
    pub fn new<M>(vars: &[Var<M>], vrs: &[u32]) -> Result<Required, String> {
        let mut by_vr = vec![false; vars.len()];
        let mut inputs = false;
        for &vr in vrs {
            match vars.get(vr as usize) {
                Some(v) if v.is_intermediate() => {
                    by_vr[vr as usize] = true;
                    inputs |= v.causality == Causality::Input;
                }
                Some(v) => {
                    return Err(format!(
                        "value reference {vr} ({}, a {} {} variable) is not declared intermediateUpdate=\"true\": only the continuous inputs and outputs are",
                        v.name,
                        v.variability.as_str(),
                        v.causality.as_str()
                    ))
                }
                None => {
                    return Err(format!(
                        "value reference {vr} is not declared intermediateUpdate=\"true\": only the continuous inputs and outputs are"
                    ))
                }
            }
        }
        Ok(Required { by_vr, inputs })
    }

    fn contains(&self, vr: u32) -> bool {
        self.by_vr.get(vr as usize).copied().unwrap_or(false)
    }
}

/// What the importer may do inside the current callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub get_allowed: bool,
    pub set_requested: bool,
    /// A set was made: FMI 3.0 has the gets first, then the sets.
    pub set_made: bool,
}

/// What a call inside the callback does with its value references.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// fmi3Get{VariableType}, fmi3GetOutputDerivatives.
    Get,
    /// fmi3Set{VariableType}.
    Set,
}

impl<M: Model> Instance3<M> {
    /// Whether `vrs` may be read or written now: always, but inside the intermediate update
    /// callback only as Intermediate Update Mode allows.
    #[inline(always)]
    pub fn intermediate_access(&self, use_: Use, vrs: &[u32]) -> Result<(), String> {
        match self.window {
            None => Ok(()),
            Some(window) => self.window_access(window, use_, vrs),
        }
    }

    /// After a set made inside the callback: no get may follow it there.
    #[inline(always)]
    pub fn intermediate_set_made(&mut self) {
        if let Some(window) = self.window.as_mut() {
            window.set_made = true;
        }
    }

    #[cold]
    fn window_access(&self, window: Window, use_: Use, vrs: &[u32]) -> Result<(), String> {
        let Some(required) = self.intermediate.as_ref() else {
            return Err("no intermediate variable was required at instantiation".into());
        };
        match use_ {
            Use::Get if !window.get_allowed => Err(
                "intermediateVariableGetAllowed = false in this intermediate update callback"
                    .into(),
            ),
            Use::Get if window.set_made => Err(
                "a get after a set in the same intermediate update callback: FMI 3.0 has all gets first, then the sets".into(),
            ),
            Use::Get => match vrs.iter().find(|vr| !required.contains(**vr)) {
                Some(vr) => Err(format!(
                    "{} is not among the requiredIntermediateVariables of fmi3InstantiateCoSimulation: only those can be read in Intermediate Update Mode",
                    self.named(*vr)
                )),
                None => Ok(()),
            },
            Use::Set if !window.set_requested => Err(
                "intermediateVariableSetRequested = false in this intermediate update callback: no input is among the requiredIntermediateVariables".into(),
            ),
            Use::Set => {
                let refused = vrs.iter().find(|vr| {
                    !required.contains(**vr)
                        || self.core.vars[**vr as usize].causality != Causality::Input
                });
                match refused {
                    Some(vr) => Err(format!(
                        "{} cannot be set in Intermediate Update Mode: only the continuous inputs among the requiredIntermediateVariables can",
                        self.named(*vr)
                    )),
                    None => Ok(()),
                }
            }
        }
    }

    /// A value reference as a refusal names it: the variable, its causality and variability.
    fn named(&self, vr: u32) -> String {
        let n_vars = self.core.vars.len();
        match (
            self.core.vars.get(vr as usize),
            Extra::of(vr, n_vars, M::EVENT_INDICATORS),
        ) {
            (Some(v), _) => format!(
                "{} (vr {vr}, a {} {})",
                v.name,
                v.variability.as_str(),
                v.causality.as_str()
            ),
            (None, Some(Extra::Time)) => format!("{TIME} (vr {vr}, the independent variable)"),
            (None, Some(Extra::Indicator(i))) => {
                format!("{} (vr {vr}, a local)", indicator_name(i))
            }
            (None, None) => format!("value reference {vr} (no variable)"),
        }
    }
}
