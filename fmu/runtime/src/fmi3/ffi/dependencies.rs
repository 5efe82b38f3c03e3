//! fmi3GetNumberOfVariableDependencies and fmi3GetVariableDependencies: the dependencies
//! modelDescription.xml declares, by value reference.

use super::*;

/// The declared dependencies of `vr` as value references: in Instantiated and Initialization
/// Mode those of `ModelStructure/InitialUnknown`, afterwards those of `Output` and
/// `ContinuousStateDerivative`, as modelDescription.xml states them.
fn dependencies<M: Model>(inst: &Instance3<M>, vr: ValueReference) -> Result<Vec<u32>, String> {
    let md = describe::model_description::<M>("");
    let ms = &md.model_structure;
    let initial = matches!(
        inst.core.state,
        FmiState::Instantiated | FmiState::InitializationMode
    );
    let index = vr as usize + 1;
    let lists: Vec<&Vec<model_description::Unknown>> = if initial {
        vec![&ms.initial_unknowns]
    } else {
        vec![&ms.outputs, &ms.derivatives]
    };
    let unknown = lists
        .iter()
        .flat_map(|l| l.iter())
        .find(|u| u.index == index)
        .ok_or_else(|| {
            format!(
                "value reference {vr} is not an {} of ModelStructure",
                if initial {
                    "InitialUnknown"
                } else {
                    "Output or ContinuousStateDerivative"
                }
            )
        })?;
    if let Some(deps) = &unknown.dependencies {
        return Ok(deps.iter().map(|i| (*i - 1) as u32).collect());
    }
    // No list: it depends on every known, the parameters and inputs before initialization,
    // the continuous states and inputs after it.
    let states: Vec<usize> = md
        .model_variables
        .iter()
        .filter_map(|v| match v.kind {
            model_description::VariableType::Real {
                derivative: Some(d),
                ..
            } => Some(d - 1),
            _ => None,
        })
        .collect();
    Ok(md
        .model_variables
        .iter()
        .enumerate()
        .filter(|(i, v)| match v.causality {
            model_description::Causality::Input => true,
            model_description::Causality::Parameter => initial,
            _ => !initial && states.contains(i),
        })
        .map(|(_, v)| v.value_reference)
        .collect())
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn get_number_of_variable_dependencies<M: Model>(
    c: *mut c_void,
    vr: ValueReference,
    n: *mut usize,
) -> Status {
    call::<M>(
        c,
        "fmi3GetNumberOfVariableDependencies",
        allowed::ANY_BUT_FATAL,
        |inst| {
            *out(n, "nDependencies")? = dependencies(inst, vr)?.len();
            Ok(OK)
        },
    )
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn get_variable_dependencies<M: Model>(
    c: *mut c_void,
    dependent: ValueReference,
    element_of_dependent: *mut usize,
    independents: *mut ValueReference,
    element_of_independents: *mut usize,
    kinds: *mut DependencyKind,
    n: usize,
) -> Status {
    call::<M>(
        c,
        "fmi3GetVariableDependencies",
        allowed::ANY_BUT_FATAL,
        |inst| {
            let deps = dependencies(inst, dependent)?;
            if n != deps.len() {
                return Err(format!(
                    "nDependencies = {n}, but value reference {dependent} has {}",
                    deps.len()
                ));
            }
            let (a, b, k, d) = (
                slice_mut(element_of_dependent, n, "elementIndicesOfDependent")?,
                slice_mut(independents, n, "independents")?,
                slice_mut(element_of_independents, n, "elementIndicesOfIndependents")?,
                slice_mut(kinds, n, "dependencyKinds")?,
            );
            for i in 0..n {
                // Scalars: element index 0.
                a[i] = 0;
                b[i] = deps[i];
                k[i] = 0;
                d[i] = DEPENDENT;
            }
            Ok(OK)
        },
    )
}
