//! The FMI state tables as far as set calls go: which variable a set call may write in which mode,
//! and every variable set in a mode against them.

use super::*;

/// A mode of the FMI state tables, as far as set calls go.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum Mode {
    ContinuousTime,
    Event,
    Step,
}

/// What the state tables (FMI 2.0 sections 3.2.3 and 4.2.4, FMI 3.0 section 3.2) let a set call
/// write once initialized: every input in Event Mode and between Co-Simulation steps; in
/// Continuous-Time Mode the continuous inputs and the continuous-time states (FMI 2.0.4
/// section 3.2.3, condition 5 of fmi2SetReal); no parameter (all are fixed here), never
/// another output, calculated parameter or local.
fn settable(fmu: &Fmu, v: &ScalarVariable, mode: Mode) -> bool {
    let index = fmu
        .md
        .model_variables
        .iter()
        .position(|w| w.name == v.name)
        .map(|i| i + 1);
    let state = fmu.md.model_variables.iter().any(
        |w| matches!(w.kind, VariableType::Real { derivative: Some(d), .. } if Some(d) == index),
    );
    (mode == Mode::ContinuousTime && state)
        || (v.causality == Causality::Input
            && (mode != Mode::ContinuousTime || v.variability == Variability::Continuous))
}

/// Sets every variable of `fmu` (to its start value, or 1) in `mode`: what the table allows
/// returns OK; the rest returns an error, leaves the FMU state's bytes as they were, and logs
/// the variable's name (for a discrete input in Continuous-Time Mode, where to set it).
pub(crate) fn set_every_variable(
    fmu: &Fmu,
    inst: &impl SetByName,
    mode: Mode,
    snapshot: &dyn Fn() -> Vec<u8>,
    current: &dyn Fn(&str) -> f64,
) {
    let model = &fmu.md.model_name;
    for v in &fmu.md.model_variables {
        let before = snapshot();
        let status = match v.kind {
            // A state keeps its value: the set must be accepted, not move the model.
            VariableType::Real { .. }
                if settable(fmu, v, mode) && v.causality != Causality::Input =>
            {
                inst.set_by_name(&v.name, current(&v.name))
            }
            VariableType::Real { start, .. } => inst.set_by_name(&v.name, start.unwrap_or(1.0)),
            VariableType::Integer { start, .. } => {
                inst.set_int_by_name(&v.name, start.unwrap_or(1))
            }
            VariableType::Boolean { .. } => continue,
        };
        let what = format!(
            "{model}: set {} ({:?} {:?}) in {mode:?} Mode",
            v.name, v.variability, v.causality
        );
        if settable(fmu, v, mode) {
            assert_eq!(status, OK, "{what}: {}", inst.log());
            continue;
        }
        assert_eq!(status, ERROR, "{what} must be refused");
        assert_eq!(
            snapshot(),
            before,
            "{what}: the refusal changed the instance"
        );
        let log = inst.log();
        let last = log.lines().last().unwrap_or_default();
        assert!(last.contains(&format!("{} is a", v.name)), "{what}: {last}");
        if v.causality == Causality::Input {
            assert!(
                last.contains(&format!("set {} in Event Mode", v.name)),
                "{what}: {last}"
            );
        }
    }
}

/// The FMU state of an FMI 2.0 instance as bytes.
pub(crate) fn snapshot2(inst: &Instance) -> Vec<u8> {
    let (s, st) = inst.get_state();
    assert_eq!(s, OK, "{}", inst.log_text());
    let bytes = inst.serialize(&st).unwrap();
    assert_eq!(inst.free_state(st), OK);
    bytes
}
