//! Writing `modelDescription.xml`, elements in the order the FMI 2.0 schema requires.

use crate::*;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, Event};
use quick_xml::Writer;

/// Shortest representation that reads back to the same `f64` (`1e-8`, not `0.00000001`).
pub(crate) fn real(x: f64) -> String {
    format!("{x:?}")
}

pub(crate) fn flag(b: bool) -> &'static str {
    if b {
        "true"
    } else {
        "false"
    }
}

pub(crate) struct Xml(pub(crate) Writer<Vec<u8>>);

impl Xml {
    pub(crate) fn write(&mut self, event: Event) {
        // Writing into a Vec cannot fail.
        self.0.write_event(event).expect("write to memory");
    }
    pub(crate) fn open(&mut self, e: BytesStart) {
        self.write(Event::Start(e));
    }
    pub(crate) fn empty(&mut self, e: BytesStart) {
        self.write(Event::Empty(e));
    }
    pub(crate) fn close(&mut self, name: &str) {
        self.write(Event::End(BytesEnd::new(name)));
    }
}

fn unknowns(xml: &mut Xml, name: &str, list: &[Unknown]) {
    if list.is_empty() {
        return;
    }
    xml.open(BytesStart::new(name));
    for u in list {
        let mut e = BytesStart::new("Unknown");
        e.push_attribute(("index", u.index.to_string().as_str()));
        if let Some(deps) = &u.dependencies {
            let s: Vec<String> = deps.iter().map(|d| d.to_string()).collect();
            e.push_attribute(("dependencies", s.join(" ").as_str()));
        }
        xml.empty(e);
    }
    xml.close(name);
}

fn variable(xml: &mut Xml, v: &ScalarVariable) {
    let mut e = BytesStart::new("ScalarVariable");
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
    xml.open(e);
    let typed = match &v.kind {
        VariableType::Real {
            start,
            unit,
            display_unit,
            min,
            max,
            derivative,
        } => {
            let mut t = BytesStart::new("Real");
            if let Some(u) = unit {
                t.push_attribute(("unit", u.as_str()));
            }
            if let Some(d) = display_unit {
                t.push_attribute(("displayUnit", d.as_str()));
            }
            if let Some(x) = min {
                t.push_attribute(("min", real(*x).as_str()));
            }
            if let Some(x) = max {
                t.push_attribute(("max", real(*x).as_str()));
            }
            if let Some(x) = start {
                t.push_attribute(("start", real(*x).as_str()));
            }
            if let Some(d) = derivative {
                t.push_attribute(("derivative", d.to_string().as_str()));
            }
            t
        }
        VariableType::Integer { start, min, max } => {
            let mut t = BytesStart::new("Integer");
            for (key, val) in [("min", min), ("max", max), ("start", start)] {
                if let Some(x) = val {
                    t.push_attribute((key, x.to_string().as_str()));
                }
            }
            t
        }
        VariableType::Boolean { start } => {
            let mut t = BytesStart::new("Boolean");
            if let Some(b) = start {
                t.push_attribute(("start", flag(*b)));
            }
            t
        }
    };
    xml.empty(typed);
    xml.close("ScalarVariable");
}

/// `UnitDefinitions`, the same in FMI 2.0 and 3.0.
pub(crate) fn unit_definitions(xml: &mut Xml, md: &ModelDescription) {
    if !md.unit_definitions.is_empty() {
        xml.open(BytesStart::new("UnitDefinitions"));
        for u in &md.unit_definitions {
            let mut e = BytesStart::new("Unit");
            e.push_attribute(("name", u.name.as_str()));
            xml.open(e);
            let b = &u.base_unit;
            let mut e = BytesStart::new("BaseUnit");
            for (key, exp) in [("kg", b.kg), ("m", b.m), ("s", b.s), ("rad", b.rad)] {
                if exp != 0 {
                    e.push_attribute((key, exp.to_string().as_str()));
                }
            }
            if b.factor != 1.0 {
                e.push_attribute(("factor", real(b.factor).as_str()));
            }
            xml.empty(e);
            for d in &u.display_units {
                let mut e = BytesStart::new("DisplayUnit");
                e.push_attribute(("name", d.name.as_str()));
                e.push_attribute(("factor", real(d.factor).as_str()));
                if d.offset != 0.0 {
                    e.push_attribute(("offset", real(d.offset).as_str()));
                }
                xml.empty(e);
            }
            xml.close("Unit");
        }
        xml.close("UnitDefinitions");
    }
}

/// `LogCategories` and `DefaultExperiment`, the same in FMI 2.0 and 3.0.
pub(crate) fn categories_and_experiment(xml: &mut Xml, md: &ModelDescription) {
    if !md.log_categories.is_empty() {
        xml.open(BytesStart::new("LogCategories"));
        for c in &md.log_categories {
            let mut e = BytesStart::new("Category");
            e.push_attribute(("name", c.name.as_str()));
            e.push_attribute(("description", c.description.as_str()));
            xml.empty(e);
        }
        xml.close("LogCategories");
    }

    if let Some(de) = &md.default_experiment {
        let mut e = BytesStart::new("DefaultExperiment");
        e.push_attribute(("startTime", real(de.start_time).as_str()));
        e.push_attribute(("stopTime", real(de.stop_time).as_str()));
        e.push_attribute(("tolerance", real(de.tolerance).as_str()));
        e.push_attribute(("stepSize", real(de.step_size).as_str()));
        xml.empty(e);
    }
}

pub(crate) fn to_xml(md: &ModelDescription) -> String {
    let mut xml = Xml(Writer::new_with_indent(Vec::new(), b' ', 2));
    xml.write(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)));

    let mut root = BytesStart::new("fmiModelDescription");
    root.push_attribute(("fmiVersion", "2.0"));
    root.push_attribute(("modelName", md.model_name.as_str()));
    root.push_attribute(("guid", md.guid.as_str()));
    root.push_attribute(("description", md.description.as_str()));
    root.push_attribute(("author", md.author.as_str()));
    root.push_attribute(("version", md.version.as_str()));
    root.push_attribute(("generationTool", md.generation_tool.as_str()));
    root.push_attribute((
        "generationDateAndTime",
        md.generation_date_and_time.as_str(),
    ));
    root.push_attribute(("variableNamingConvention", "structured"));
    root.push_attribute((
        "numberOfEventIndicators",
        md.number_of_event_indicators.to_string().as_str(),
    ));
    xml.open(root);

    if let Some(me) = &md.model_exchange {
        let mut e = BytesStart::new("ModelExchange");
        e.push_attribute(("modelIdentifier", me.model_identifier.as_str()));
        e.push_attribute(("needsExecutionTool", "false"));
        e.push_attribute((
            "completedIntegratorStepNotNeeded",
            flag(me.completed_integrator_step_not_needed),
        ));
        e.push_attribute(("canBeInstantiatedOnlyOncePerProcess", "false"));
        e.push_attribute((
            "canNotUseMemoryManagementFunctions",
            flag(me.can_not_use_memory_management_functions),
        ));
        e.push_attribute(("canGetAndSetFMUstate", flag(me.can_get_and_set_fmu_state)));
        e.push_attribute(("canSerializeFMUstate", flag(me.can_serialize_fmu_state)));
        e.push_attribute((
            "providesDirectionalDerivative",
            flag(me.provides_directional_derivative),
        ));
        xml.empty(e);
    }

    let cs = &md.co_simulation;
    let mut e = BytesStart::new("CoSimulation");
    e.push_attribute(("modelIdentifier", cs.model_identifier.as_str()));
    e.push_attribute(("needsExecutionTool", "false"));
    e.push_attribute((
        "canHandleVariableCommunicationStepSize",
        flag(cs.can_handle_variable_communication_step_size),
    ));
    e.push_attribute(("canInterpolateInputs", flag(cs.can_interpolate_inputs)));
    e.push_attribute((
        "maxOutputDerivativeOrder",
        cs.max_output_derivative_order.to_string().as_str(),
    ));
    e.push_attribute(("canRunAsynchronuously", "false"));
    e.push_attribute(("canBeInstantiatedOnlyOncePerProcess", "false"));
    e.push_attribute((
        "canNotUseMemoryManagementFunctions",
        flag(cs.can_not_use_memory_management_functions),
    ));
    e.push_attribute(("canGetAndSetFMUstate", flag(cs.can_get_and_set_fmu_state)));
    e.push_attribute(("canSerializeFMUstate", flag(cs.can_serialize_fmu_state)));
    e.push_attribute((
        "providesDirectionalDerivative",
        flag(cs.provides_directional_derivative),
    ));
    xml.empty(e);

    unit_definitions(&mut xml, md);
    categories_and_experiment(&mut xml, md);

    xml.open(BytesStart::new("ModelVariables"));
    for v in &md.model_variables {
        variable(&mut xml, v);
    }
    xml.close("ModelVariables");

    xml.open(BytesStart::new("ModelStructure"));
    let ms = &md.model_structure;
    unknowns(&mut xml, "Outputs", &ms.outputs);
    unknowns(&mut xml, "Derivatives", &ms.derivatives);
    unknowns(&mut xml, "InitialUnknowns", &ms.initial_unknowns);
    xml.close("ModelStructure");

    xml.close("fmiModelDescription");
    let mut s = String::from_utf8(xml.0.into_inner()).expect("quick-xml writes UTF-8");
    s.push('\n');
    s
}
