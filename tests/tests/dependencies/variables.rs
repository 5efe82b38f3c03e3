//! The model's variables as the probe sees them: found in the model description, read and written
//! through the C ABI as Reals (an Integer converted), and which of them are parameters and inputs.

use super::*;
use fmu_harness::DISCARD;

/// A variable the probe reads or moves: its value reference and whether it is an Integer.
#[derive(Clone, Copy)]
pub(crate) struct Variable {
    pub(crate) vr: u32,
    pub(crate) integer: bool,
}

pub(crate) fn variable(md: &ModelDescription, index: usize) -> Variable {
    let v = &md.model_variables[index - 1];
    Variable {
        vr: v.value_reference,
        integer: matches!(v.kind, VariableType::Integer { .. }),
    }
}

pub(crate) fn name(md: &ModelDescription, index: usize) -> &str {
    &md.model_variables[index - 1].name
}

/// Start, min and max of a variable (Integers as Reals).
pub(crate) fn range(md: &ModelDescription, index: usize) -> (f64, f64, f64) {
    match &md.model_variables[index - 1].kind {
        VariableType::Real {
            start, min, max, ..
        } => (
            start.unwrap_or(0.0),
            min.unwrap_or(f64::NEG_INFINITY),
            max.unwrap_or(f64::INFINITY),
        ),
        VariableType::Integer { start, min, max } => (
            f64::from(start.unwrap_or(0)),
            min.map_or(f64::NEG_INFINITY, f64::from),
            max.map_or(f64::INFINITY, f64::from),
        ),
        VariableType::Boolean { .. } => (0.0, 0.0, 1.0),
    }
}

thread_local! {
    /// This thread's gets, and those that failed (any status but OK and Discard): the FMU
    /// refusing to compute, an invalid parameter moved to, say.
    pub(crate) static GETS: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
}

/// The value of `v`; NaN where the get fails: discarded (the states lie outside the model's
/// domain) or refused (counted in [`GETS`], which the probe's tally reads).
pub(crate) fn read(inst: &Instance, v: Variable) -> f64 {
    let (status, value) = if v.integer {
        let mut x = [0];
        let status = unsafe { (inst.fmu.api.get_integer)(inst.c, &v.vr, 1, x.as_mut_ptr()) };
        (status, f64::from(x[0]))
    } else {
        let mut x = [0.0];
        (inst.get_real(&[v.vr], &mut x), x[0])
    };
    GETS.with(|g| {
        let (n, failed) = g.get();
        g.set((
            n + 1,
            failed + usize::from(status != OK && status != DISCARD),
        ));
    });
    if status == OK {
        value
    } else {
        f64::NAN
    }
}

pub(crate) fn write(inst: &Instance, v: Variable, value: f64) -> bool {
    if v.integer {
        let x = value as i32;
        unsafe { (inst.fmu.api.set_integer)(inst.c, &v.vr, 1, &x) == OK }
    } else {
        inst.set_real(&[v.vr], &[value]) == OK
    }
}

/// Whether two readings of an unknown differ beyond rounding, relative to the readings and to
/// `scale`.
pub(crate) fn moved(a: f64, b: f64, scale: f64) -> bool {
    (a - b).abs() > 1e-9 * a.abs().max(b.abs()).max(scale).max(1e-3) || a.is_nan() != b.is_nan()
}
/// The parameters the FMU can be given (not constants).
pub(crate) fn parameters(md: &ModelDescription) -> Vec<usize> {
    (1..=md.model_variables.len())
        .filter(|i| {
            let v = &md.model_variables[i - 1];
            v.causality == Causality::Parameter && v.variability != Variability::Constant
        })
        .collect()
}
pub(crate) fn inputs(md: &ModelDescription) -> Vec<usize> {
    (1..=md.model_variables.len())
        .filter(|i| md.model_variables[i - 1].causality == Causality::Input)
        .collect()
}
