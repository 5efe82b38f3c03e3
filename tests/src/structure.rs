//! The value references an importer asks derivatives of and for, by the ModelStructure.

use model_description::{Causality, ModelDescription, VariableType};

/// The value references of the ModelStructure's unknowns and knowns.
pub struct Structure {
    /// The continuous states, in the order of the Derivatives.
    pub states: Vec<u32>,
    pub derivatives: Vec<u32>,
    /// The Real outputs.
    pub outputs: Vec<u32>,
    /// The Real inputs.
    pub inputs: Vec<u32>,
    /// The Real parameters.
    pub parameters: Vec<u32>,
    /// The Real initial unknowns.
    pub initial: Vec<u32>,
}

pub fn structure(md: &ModelDescription) -> Structure {
    let vars = &md.model_variables;
    let vr = |i: usize| vars[i - 1].value_reference;
    let real = |vr: &u32| matches!(vars[*vr as usize].kind, VariableType::Real { .. });
    let of = |causality: Causality| -> Vec<u32> {
        vars.iter()
            .filter(|v| v.causality == causality)
            .map(|v| v.value_reference)
            .filter(real)
            .collect()
    };
    let ms = &md.model_structure;
    Structure {
        states: ms
            .derivatives
            .iter()
            .map(|d| match vars[d.index - 1].kind {
                VariableType::Real {
                    derivative: Some(s),
                    ..
                } => vr(s),
                _ => unreachable!("a derivative names its state"),
            })
            .collect(),
        derivatives: ms.derivatives.iter().map(|d| vr(d.index)).collect(),
        outputs: ms
            .outputs
            .iter()
            .map(|o| vr(o.index))
            .filter(real)
            .collect(),
        inputs: of(Causality::Input),
        parameters: of(Causality::Parameter),
        initial: ms
            .initial_unknowns
            .iter()
            .map(|u| vr(u.index))
            .filter(real)
            .collect(),
    }
}
