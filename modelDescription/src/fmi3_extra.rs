//! The variables FMI 3.0 requires beyond a model's declarations: the independent variable
//! `time`, and one variable per event indicator (a `ModelStructure/EventIndicator` names a
//! variable). Their value references follow the model's `n` variables (`time` is `n`, event
//! indicator `i` is `n + 1 + i`), so that every variable keeps the value reference it has in
//! the FMI 2.0 FMU. The FMI 3.0 description and the runtime's FMI 3.0 layer both use these,
//! and the rule for which variables are intermediate variables ([`intermediate_update`]).

use crate::{Causality, Variability};

/// The independent variable's name.
pub const TIME: &str = "time";

/// The name of event indicator `i` (0-based, as in `fmi3GetEventIndicators`).
pub fn indicator_name(i: usize) -> String {
    format!("event_indicator_{}", i + 1)
}

/// What a value reference beyond the model's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extra {
    Time,
    Indicator(usize),
}

impl Extra {
    /// The extra variable `vr` is, for a model with `n_vars` declared variables and
    /// `indicators` event indicators.
    pub fn of(vr: u32, n_vars: usize, indicators: usize) -> Option<Extra> {
        let vr = vr as usize;
        if vr == n_vars {
            Some(Extra::Time)
        } else if vr > n_vars && vr - n_vars - 1 < indicators {
            Some(Extra::Indicator(vr - n_vars - 1))
        } else {
            None
        }
    }

    /// Its value reference, for a model with `n_vars` declared variables.
    pub fn value_reference(self, n_vars: usize) -> usize {
        match self {
            Extra::Time => n_vars,
            Extra::Indicator(i) => n_vars + 1 + i,
        }
    }
}

/// Whether a variable is declared `intermediateUpdate="true"`: readable or settable inside the
/// intermediate update callback. FMI 3.0 allows it only on continuous-time variables, and
/// `requiredIntermediateVariables` names inputs to set and outputs to get; so the continuous
/// inputs and outputs (`Float64` only: an `Int32` is never continuous).
pub fn intermediate_update(causality: Causality, variability: Variability) -> bool {
    variability == Variability::Continuous
        && matches!(causality, Causality::Input | Causality::Output)
}
