//! Writing the FMI 3.0 `modelDescription.xml` of the same description: `Float64` for Reals,
//! `Int32` for Integers, value references instead of indices in `ModelStructure`, and the
//! variables FMI 3.0 requires beyond the model's own, after its value references so that
//! each keeps the one it has in FMI 2.0: the independent variable `time`, and one local
//! variable per event indicator, which `ModelStructure/EventIndicator` names.

use crate::fmi3_extra::{indicator_name, intermediate_update, Extra, TIME};
use crate::write::{categories_and_experiment, flag, real, unit_definitions, Xml};
use crate::*;
use quick_xml::events::{BytesDecl, BytesStart, Event};
use quick_xml::Writer;

/// The value reference of the 1-based `index` of the FMI 2.0 description.
fn vr(md: &ModelDescription, index: usize) -> u32 {
    md.model_variables[index - 1].value_reference
}

fn vrs(md: &ModelDescription, indices: &[usize]) -> String {
    let list: Vec<String> = indices.iter().map(|i| vr(md, *i).to_string()).collect();
    list.join(" ")
}

fn variable(xml: &mut Xml, md: &ModelDescription, v: &ScalarVariable, state: bool) {
    let (tag, start, min, max) = match &v.kind {
        VariableType::Real {
            start, min, max, ..
        } => ("Float64", start.map(real), min.map(real), max.map(real)),
        VariableType::Integer { start, min, max } => (
            "Int32",
            start.map(|x| x.to_string()),
            min.map(|x| x.to_string()),
            max.map(|x| x.to_string()),
        ),
        VariableType::Boolean { start } => ("Boolean", start.map(|b| flag(b).into()), None, None),
    };
    let mut e = BytesStart::new(tag);
    e.push_attribute(("name", v.name.as_str()));
    e.push_attribute(("valueReference", v.value_reference.to_string().as_str()));
    if !v.description.is_empty() {
        e.push_attribute(("description", v.description.as_str()));
    }
    e.push_attribute(("causality", v.causality.as_str()));
    e.push_attribute(("variability", v.variability.as_str()));
    if let Some(i) = v.initial {
        e.push_attribute(("initial", i.as_str()));
    }
    if let VariableType::Real { unit: Some(u), .. } = &v.kind {
        // The unit through a type of its own (see `type_definitions`).
        e.push_attribute(("declaredType", u.as_str()));
    }
    for (key, value) in [("min", min), ("max", max), ("start", start)] {
        if let Some(x) = value {
            e.push_attribute((key, x.as_str()));
        }
    }
    if let VariableType::Real {
        derivative: Some(d),
        ..
    } = &v.kind
    {
        e.push_attribute(("derivative", vr(md, *d).to_string().as_str()));
    }
    if state {
        // An event may reset a state (an impact's velocity jump).
        e.push_attribute(("reinit", "true"));
    }
    if tag == "Float64" && intermediate_update(v.causality, v.variability) {
        e.push_attribute(("intermediateUpdate", "true"));
    }
    xml.empty(e);
}

fn unknowns(xml: &mut Xml, md: &ModelDescription, name: &str, list: &[Unknown]) {
    for u in list {
        let mut e = BytesStart::new(name);
        e.push_attribute(("valueReference", vr(md, u.index).to_string().as_str()));
        if let Some(deps) = &u.dependencies {
            e.push_attribute(("dependencies", vrs(md, deps).as_str()));
        }
        xml.empty(e);
    }
}

/// One `Float64Type` per unit a variable has, named after the unit, with its display unit.
/// Variables name their unit through `declaredType`, as the Reference FMUs do: FMI 3.0 also
/// allows `unit` on the variable itself, but not every importer reads it there (fmi-sim 0.7
/// refuses the description).
fn type_definitions(xml: &mut Xml, md: &ModelDescription) {
    // `time` is in seconds.
    let mut units: Vec<(&str, Option<&str>)> = vec![("s", None)];
    for v in &md.model_variables {
        if let VariableType::Real {
            unit: Some(u),
            display_unit,
            ..
        } = &v.kind
        {
            if !units.iter().any(|(n, _)| n == u) {
                units.push((u.as_str(), display_unit.as_deref()));
            }
        }
    }
    xml.open(BytesStart::new("TypeDefinitions"));
    for (unit, display) in units {
        let mut e = BytesStart::new("Float64Type");
        e.push_attribute(("name", unit));
        e.push_attribute(("unit", unit));
        if let Some(d) = display {
            e.push_attribute(("displayUnit", d));
        }
        xml.empty(e);
    }
    xml.close("TypeDefinitions");
}

pub(crate) fn to_fmi3_xml(md: &ModelDescription) -> String {
    let mut xml = Xml(Writer::new_with_indent(Vec::new(), b' ', 2));
    xml.write(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)));

    let mut root = BytesStart::new("fmiModelDescription");
    root.push_attribute(("fmiVersion", "3.0"));
    root.push_attribute(("modelName", md.model_name.as_str()));
    root.push_attribute(("instantiationToken", md.guid.as_str()));
    root.push_attribute(("description", md.description.as_str()));
    root.push_attribute(("author", md.author.as_str()));
    root.push_attribute(("version", md.version.as_str()));
    root.push_attribute(("generationTool", md.generation_tool.as_str()));
    root.push_attribute((
        "generationDateAndTime",
        md.generation_date_and_time.as_str(),
    ));
    root.push_attribute(("variableNamingConvention", "structured"));
    xml.open(root);

    if let Some(me) = &md.model_exchange {
        let mut e = BytesStart::new("ModelExchange");
        e.push_attribute(("modelIdentifier", me.model_identifier.as_str()));
        e.push_attribute(("needsExecutionTool", "false"));
        e.push_attribute(("canBeInstantiatedOnlyOncePerProcess", "false"));
        e.push_attribute(("canGetAndSetFMUState", flag(me.can_get_and_set_fmu_state)));
        e.push_attribute(("canSerializeFMUState", flag(me.can_serialize_fmu_state)));
        e.push_attribute((
            "providesDirectionalDerivatives",
            flag(me.provides_directional_derivative),
        ));
        // The adjoint derivatives come with the directional ones: both from the model's tangent.
        e.push_attribute((
            "providesAdjointDerivatives",
            flag(me.provides_directional_derivative),
        ));
        e.push_attribute((
            "needsCompletedIntegratorStep",
            flag(!me.completed_integrator_step_not_needed),
        ));
        xml.empty(e);
    }

    let cs = &md.co_simulation;
    let mut e = BytesStart::new("CoSimulation");
    e.push_attribute(("modelIdentifier", cs.model_identifier.as_str()));
    e.push_attribute(("needsExecutionTool", "false"));
    e.push_attribute(("canBeInstantiatedOnlyOncePerProcess", "false"));
    e.push_attribute(("canGetAndSetFMUState", flag(cs.can_get_and_set_fmu_state)));
    e.push_attribute(("canSerializeFMUState", flag(cs.can_serialize_fmu_state)));
    e.push_attribute((
        "providesDirectionalDerivatives",
        flag(cs.provides_directional_derivative),
    ));
    // The adjoint derivatives come with the directional ones: both from the model's tangent.
    e.push_attribute((
        "providesAdjointDerivatives",
        flag(cs.provides_directional_derivative),
    ));
    e.push_attribute((
        "canHandleVariableCommunicationStepSize",
        flag(cs.can_handle_variable_communication_step_size),
    ));
    e.push_attribute((
        "maxOutputDerivativeOrder",
        cs.max_output_derivative_order.to_string().as_str(),
    ));
    // What the runtime's FMI 3.0 layer provides to every model.
    e.push_attribute(("providesIntermediateUpdate", "true"));
    e.push_attribute(("mightReturnEarlyFromDoStep", "true"));
    e.push_attribute(("canReturnEarlyAfterIntermediateUpdate", "true"));
    e.push_attribute(("hasEventMode", "true"));
    xml.empty(e);

    unit_definitions(&mut xml, md);
    type_definitions(&mut xml, md);
    categories_and_experiment(&mut xml, md);

    let n = md.model_variables.len();
    let states: Vec<usize> = md
        .model_variables
        .iter()
        .filter_map(|v| match v.kind {
            VariableType::Real {
                derivative: Some(d),
                ..
            } => Some(d),
            _ => None,
        })
        .collect();
    xml.open(BytesStart::new("ModelVariables"));
    let mut time = BytesStart::new("Float64");
    time.push_attribute(("name", TIME));
    time.push_attribute((
        "valueReference",
        Extra::Time.value_reference(n).to_string().as_str(),
    ));
    time.push_attribute(("description", "Simulation time"));
    time.push_attribute(("causality", "independent"));
    time.push_attribute(("variability", "continuous"));
    time.push_attribute(("declaredType", "s"));
    xml.empty(time);
    for (i, v) in md.model_variables.iter().enumerate() {
        variable(&mut xml, md, v, states.contains(&(i + 1)));
    }
    for i in 0..md.number_of_event_indicators {
        let mut e = BytesStart::new("Float64");
        let vr = Extra::Indicator(i).value_reference(n);
        e.push_attribute(("name", indicator_name(i).as_str()));
        e.push_attribute(("valueReference", vr.to_string().as_str()));
        e.push_attribute((
            "description",
            format!(
                "Event indicator {} (fmi3GetEventIndicators), with its hysteresis",
                i + 1
            )
            .as_str(),
        ));
        e.push_attribute(("causality", "local"));
        e.push_attribute(("variability", "continuous"));
        xml.empty(e);
    }
    xml.close("ModelVariables");

    xml.open(BytesStart::new("ModelStructure"));
    let ms = &md.model_structure;
    unknowns(&mut xml, md, "Output", &ms.outputs);
    unknowns(&mut xml, md, "ContinuousStateDerivative", &ms.derivatives);
    unknowns(&mut xml, md, "InitialUnknown", &ms.initial_unknowns);
    for i in 0..md.number_of_event_indicators {
        let mut e = BytesStart::new("EventIndicator");
        let vr = Extra::Indicator(i).value_reference(n);
        e.push_attribute(("valueReference", vr.to_string().as_str()));
        xml.empty(e);
    }
    xml.close("ModelStructure");

    xml.close("fmiModelDescription");
    let mut s = String::from_utf8(xml.0.into_inner()).expect("quick-xml writes UTF-8");
    s.push('\n');
    s
}
