//! The variables the comparisons look at: Integers, Reals and outputs by value reference, their
//! finiteness, and the start values of a modelDescription.xml.

use super::*;

pub(crate) fn is_integer(fmu: &Fmu, name: &str) -> bool {
    fmu.md
        .model_variables
        .iter()
        .any(|v| v.name == name && matches!(v.kind, VariableType::Integer { .. }))
}

/// The value references of every Real variable.
pub(crate) fn reals(fmu: &Fmu) -> Vec<u32> {
    fmu.md
        .model_variables
        .iter()
        .filter(|v| matches!(v.kind, VariableType::Real { .. }))
        .map(|v| v.value_reference)
        .collect()
}

/// The output names of the scenario's reference.
pub(crate) fn outputs(fmu: &Fmu) -> Vec<u32> {
    fmu.md
        .model_structure
        .outputs
        .iter()
        .map(|u| u.index as u32 - 1)
        .filter(|vr| {
            matches!(
                fmu.md.model_variables[*vr as usize].kind,
                VariableType::Real { .. }
            )
        })
        .collect()
}

/// Panics unless every value is finite: an importer that records every variable treats a NaN
/// or an infinity as an error.
pub(crate) fn assert_finite(fmu: &Fmu, vrs: &[u32], values: &[f64], when: &str) {
    for (vr, v) in vrs.iter().zip(values) {
        assert!(
            v.is_finite(),
            "{} {when}: {} = {v}",
            fmu.md.model_name,
            fmu.md.model_variables[*vr as usize].name
        );
    }
}
/// Every `start="..."` of a modelDescription.xml: each number in it (arrays hold several) and
/// the variable's name.
pub(crate) fn start_values(xml: &str) -> Vec<(String, String)> {
    xml.split("<ScalarVariable")
        .flat_map(|v| v.split("<Float64").flat_map(|v| v.split("<Int32")))
        .skip(1)
        .filter_map(|v| {
            let attribute = |key: &str| {
                let rest = v.split_once(&format!(" {key}=\""))?.1;
                Some(rest.split_once('"')?.0.to_string())
            };
            Some((attribute("name")?, attribute("start")?))
        })
        .flat_map(|(name, start)| {
            start
                .split_whitespace()
                .map(|x| (name.clone(), x.to_string()))
                .collect::<Vec<_>>()
        })
        .collect()
}
