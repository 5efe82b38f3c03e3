//! The variables FMI 3.0 requires beyond a model's declarations: the independent variable
//! `time`, and one variable per event indicator (a `ModelStructure/EventIndicator` names a
//! variable). Their value references follow the model's, so that every variable keeps the
//! value reference it has in the FMI 2.0 FMU.

use crate::model::Model;

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

/// The extra variable `vr` is, for a model with `n_vars` declared variables.
pub fn extra<M: Model>(vr: u32, n_vars: usize) -> Option<Extra> {
    let vr = vr as usize;
    if vr == n_vars {
        Some(Extra::Time)
    } else if vr > n_vars && vr - n_vars - 1 < M::EVENT_INDICATORS {
        Some(Extra::Indicator(vr - n_vars - 1))
    } else {
        None
    }
}
