//! Reading `modelDescription.xml` back into [`ModelDescription`].

use crate::*;
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use std::collections::HashMap;
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub struct ReadError(pub String);

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "modelDescription.xml: {}", self.0)
    }
}

impl std::error::Error for ReadError {}

fn err<T>(msg: impl Into<String>) -> Result<T, ReadError> {
    Err(ReadError(msg.into()))
}

type Attrs = HashMap<String, String>;

fn attributes(e: &BytesStart) -> Result<Attrs, ReadError> {
    let mut map = HashMap::new();
    for a in e.attributes() {
        let a = a.map_err(|e| ReadError(e.to_string()))?;
        let key = a.key.as_ref().to_string();
        let value = a
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map_err(|e| ReadError(e.to_string()))?
            .into_owned();
        map.insert(key, value);
    }
    Ok(map)
}

fn text(a: &Attrs, key: &str) -> String {
    a.get(key).cloned().unwrap_or_default()
}

fn parse<T: std::str::FromStr>(a: &Attrs, key: &str) -> Result<Option<T>, ReadError> {
    match a.get(key) {
        None => Ok(None),
        Some(s) => match s.trim().parse() {
            Ok(v) => Ok(Some(v)),
            Err(_) => err(format!("attribute {key}=\"{s}\" is malformed")),
        },
    }
}

fn required<T: std::str::FromStr>(a: &Attrs, key: &str, element: &str) -> Result<T, ReadError> {
    parse(a, key)?.ok_or_else(|| ReadError(format!("<{element}> lacks attribute {key}")))
}

fn flag(a: &Attrs, key: &str) -> Result<bool, ReadError> {
    Ok(parse::<bool>(a, key)?.unwrap_or(false))
}

fn unknown(a: &Attrs) -> Result<Unknown, ReadError> {
    let dependencies = match a.get("dependencies") {
        None => None,
        Some(s) => Some(
            s.split_whitespace()
                .map(|d| {
                    d.parse()
                        .map_err(|_| ReadError(format!("bad dependency '{d}'")))
                })
                .collect::<Result<Vec<usize>, _>>()?,
        ),
    };
    Ok(Unknown {
        index: required(a, "index", "Unknown")?,
        dependencies,
    })
}

pub(crate) fn from_xml(xml: &str) -> Result<ModelDescription, ReadError> {
    let mut reader = Reader::from_str(xml);
    let mut md = ModelDescription::default();
    let mut seen_root = false;
    // The open ancestors, innermost last.
    let mut path: Vec<String> = Vec::new();
    let mut pending: Option<(Attrs, Attrs)> = None; // ScalarVariable attributes, type attributes + name
    let mut pending_type: Option<String> = None;
    loop {
        let event = reader.read_event().map_err(|e| ReadError(e.to_string()))?;
        let (e, is_empty) = match &event {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) => {
                let closed = path.pop();
                if closed.as_deref() == Some("ScalarVariable") {
                    let (sv, ty) = pending
                        .take()
                        .ok_or_else(|| ReadError("stray end".into()))?;
                    let kind = pending_type.take().ok_or_else(|| {
                        ReadError(format!(
                            "variable '{}' has no type element",
                            text(&sv, "name")
                        ))
                    })?;
                    md.model_variables.push(scalar_variable(&sv, &kind, &ty)?);
                }
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        let name = e.name().as_ref().to_string();
        let a = attributes(e)?;
        let parent = path.last().map(String::as_str);
        match (parent, name.as_str()) {
            (None, "fmiModelDescription") => {
                seen_root = true;
                if text(&a, "fmiVersion") != "2.0" {
                    return err(format!(
                        "fmiVersion '{}' is not 2.0",
                        text(&a, "fmiVersion")
                    ));
                }
                md.model_name = text(&a, "modelName");
                md.guid = text(&a, "guid");
                md.description = text(&a, "description");
                md.author = text(&a, "author");
                md.version = text(&a, "version");
                md.generation_tool = text(&a, "generationTool");
                md.generation_date_and_time = text(&a, "generationDateAndTime");
                md.number_of_event_indicators = parse(&a, "numberOfEventIndicators")?.unwrap_or(0);
            }
            (None, other) => return err(format!("root element is <{other}>")),
            (Some("fmiModelDescription"), "ModelExchange") => {
                md.model_exchange = Some(ModelExchange {
                    model_identifier: text(&a, "modelIdentifier"),
                    completed_integrator_step_not_needed: flag(
                        &a,
                        "completedIntegratorStepNotNeeded",
                    )?,
                    can_get_and_set_fmu_state: flag(&a, "canGetAndSetFMUstate")?,
                    can_serialize_fmu_state: flag(&a, "canSerializeFMUstate")?,
                    provides_directional_derivative: flag(&a, "providesDirectionalDerivative")?,
                    can_not_use_memory_management_functions: flag(
                        &a,
                        "canNotUseMemoryManagementFunctions",
                    )?,
                });
            }
            (Some("fmiModelDescription"), "CoSimulation") => {
                md.co_simulation = CoSimulation {
                    model_identifier: text(&a, "modelIdentifier"),
                    can_handle_variable_communication_step_size: flag(
                        &a,
                        "canHandleVariableCommunicationStepSize",
                    )?,
                    can_interpolate_inputs: flag(&a, "canInterpolateInputs")?,
                    max_output_derivative_order: parse(&a, "maxOutputDerivativeOrder")?
                        .unwrap_or(0),
                    can_get_and_set_fmu_state: flag(&a, "canGetAndSetFMUstate")?,
                    can_serialize_fmu_state: flag(&a, "canSerializeFMUstate")?,
                    provides_directional_derivative: flag(&a, "providesDirectionalDerivative")?,
                    can_not_use_memory_management_functions: flag(
                        &a,
                        "canNotUseMemoryManagementFunctions",
                    )?,
                };
            }
            (Some("UnitDefinitions"), "Unit") => md.unit_definitions.push(Unit {
                name: text(&a, "name"),
                ..Default::default()
            }),
            (Some("Unit"), "BaseUnit") => {
                let unit = md.unit_definitions.last_mut().expect("inside a Unit");
                unit.base_unit = BaseUnit {
                    kg: parse(&a, "kg")?.unwrap_or(0),
                    m: parse(&a, "m")?.unwrap_or(0),
                    s: parse(&a, "s")?.unwrap_or(0),
                    rad: parse(&a, "rad")?.unwrap_or(0),
                    factor: parse(&a, "factor")?.unwrap_or(1.0),
                };
            }
            (Some("Unit"), "DisplayUnit") => {
                let unit = md.unit_definitions.last_mut().expect("inside a Unit");
                unit.display_units.push(DisplayUnit {
                    name: text(&a, "name"),
                    factor: parse(&a, "factor")?.unwrap_or(1.0),
                    offset: parse(&a, "offset")?.unwrap_or(0.0),
                });
            }
            (Some("LogCategories"), "Category") => md.log_categories.push(LogCategory {
                name: text(&a, "name"),
                description: text(&a, "description"),
            }),
            (Some("fmiModelDescription"), "DefaultExperiment") => {
                md.default_experiment = Some(DefaultExperiment {
                    start_time: parse(&a, "startTime")?.unwrap_or(0.0),
                    stop_time: parse(&a, "stopTime")?.unwrap_or(0.0),
                    tolerance: parse(&a, "tolerance")?.unwrap_or(0.0),
                    step_size: parse(&a, "stepSize")?.unwrap_or(0.0),
                });
            }
            (Some("ModelVariables"), "ScalarVariable") => {
                if is_empty {
                    return err(format!(
                        "variable '{}' has no type element",
                        text(&a, "name")
                    ));
                }
                pending = Some((a, HashMap::new()));
            }
            (Some("ScalarVariable"), kind @ ("Real" | "Integer" | "Boolean")) => {
                pending_type = Some(kind.to_string());
                if let Some((_, ty)) = pending.as_mut() {
                    *ty = a;
                }
            }
            (Some("Outputs"), "Unknown") => md.model_structure.outputs.push(unknown(&a)?),
            (Some("Derivatives"), "Unknown") => md.model_structure.derivatives.push(unknown(&a)?),
            (Some("InitialUnknowns"), "Unknown") => {
                md.model_structure.initial_unknowns.push(unknown(&a)?)
            }
            _ => {}
        }
        if !is_empty {
            path.push(name);
        }
    }
    if !seen_root {
        return err("no <fmiModelDescription> element");
    }
    if !path.is_empty() {
        return err(format!("unclosed element <{}>", path.join("/")));
    }
    Ok(md)
}

fn scalar_variable(sv: &Attrs, kind: &str, ty: &Attrs) -> Result<ScalarVariable, ReadError> {
    let name = text(sv, "name");
    let causality = match sv.get("causality") {
        None => Causality::Local,
        Some(c) => Causality::parse(c)
            .ok_or_else(|| ReadError(format!("variable '{name}': causality '{c}'")))?,
    };
    let variability = match sv.get("variability") {
        None => Variability::Continuous,
        Some(c) => Variability::parse(c)
            .ok_or_else(|| ReadError(format!("variable '{name}': variability '{c}'")))?,
    };
    let initial = match sv.get("initial") {
        None => None,
        Some(c) => Some(
            Initial::parse(c)
                .ok_or_else(|| ReadError(format!("variable '{name}': initial '{c}'")))?,
        ),
    };
    let kind = match kind {
        "Real" => VariableType::Real {
            start: parse(ty, "start")?,
            unit: ty.get("unit").cloned(),
            display_unit: ty.get("displayUnit").cloned(),
            min: parse(ty, "min")?,
            max: parse(ty, "max")?,
            derivative: parse(ty, "derivative")?,
        },
        "Integer" => VariableType::Integer {
            start: parse(ty, "start")?,
            min: parse(ty, "min")?,
            max: parse(ty, "max")?,
        },
        _ => VariableType::Boolean {
            start: parse(ty, "start")?,
        },
    };
    Ok(ScalarVariable {
        value_reference: required(sv, "valueReference", "ScalarVariable")?,
        description: text(sv, "description"),
        name,
        causality,
        variability,
        initial,
        kind,
    })
}
