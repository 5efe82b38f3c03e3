//! The FMI 2.0 `modelDescription.xml` as plain Rust types.
//!
//! Only the subset that this project writes is modelled (Model Exchange and Co-Simulation), but
//! every element and
//! attribute it writes is read back by [`ModelDescription::from_xml`], so a packaged FMU can be
//! inspected by tests and tools with the same types that produced it.

pub mod fmi3_extra;
mod read;
mod write;
mod write3;

pub use read::ReadError;

/// `fmiModelDescription`, the root element.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelDescription {
    pub model_name: String,
    pub guid: String,
    pub description: String,
    pub author: String,
    pub version: String,
    pub generation_tool: String,
    /// An `xs:dateTime`, e.g. `2026-11-21T10:00:00Z`.
    pub generation_date_and_time: String,
    pub number_of_event_indicators: usize,
    /// The `ModelExchange` element, when the binary offers that interface too.
    pub model_exchange: Option<ModelExchange>,
    pub co_simulation: CoSimulation,
    pub unit_definitions: Vec<Unit>,
    pub log_categories: Vec<LogCategory>,
    pub default_experiment: Option<DefaultExperiment>,
    pub model_variables: Vec<ScalarVariable>,
    pub model_structure: ModelStructure,
}

/// The `ModelExchange` element and its capability flags.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelExchange {
    pub model_identifier: String,
    pub completed_integrator_step_not_needed: bool,
    pub can_get_and_set_fmu_state: bool,
    pub can_serialize_fmu_state: bool,
    pub provides_directional_derivative: bool,
    pub can_not_use_memory_management_functions: bool,
}

/// The `CoSimulation` element and its capability flags.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CoSimulation {
    pub model_identifier: String,
    pub can_handle_variable_communication_step_size: bool,
    pub can_interpolate_inputs: bool,
    pub max_output_derivative_order: u32,
    pub can_get_and_set_fmu_state: bool,
    pub can_serialize_fmu_state: bool,
    pub provides_directional_derivative: bool,
    pub can_not_use_memory_management_functions: bool,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Unit {
    pub name: String,
    pub base_unit: BaseUnit,
    pub display_units: Vec<DisplayUnit>,
}

/// Exponents of the SI base units (plus rad) and the factor to them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BaseUnit {
    pub kg: i32,
    pub m: i32,
    pub s: i32,
    pub rad: i32,
    pub factor: f64,
}

/// `display = factor * value + offset`, as the standard defines it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DisplayUnit {
    pub name: String,
    pub factor: f64,
    pub offset: f64,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct LogCategory {
    pub name: String,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct DefaultExperiment {
    pub start_time: f64,
    pub stop_time: f64,
    pub tolerance: f64,
    pub step_size: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Causality {
    Parameter,
    CalculatedParameter,
    Input,
    Output,
    Local,
    Independent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variability {
    Constant,
    Fixed,
    Tunable,
    Discrete,
    Continuous,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Initial {
    Exact,
    Approx,
    Calculated,
}

/// The typed part of a `ScalarVariable`.
#[derive(Debug, Clone, PartialEq)]
pub enum VariableType {
    Real {
        start: Option<f64>,
        unit: Option<String>,
        display_unit: Option<String>,
        min: Option<f64>,
        max: Option<f64>,
        /// 1-based index of the state this variable is the derivative of.
        derivative: Option<usize>,
    },
    Integer {
        start: Option<i32>,
        min: Option<i32>,
        max: Option<i32>,
    },
    Boolean {
        start: Option<bool>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ScalarVariable {
    pub name: String,
    pub value_reference: u32,
    pub description: String,
    pub causality: Causality,
    pub variability: Variability,
    pub initial: Option<Initial>,
    pub kind: VariableType,
}

/// One `Unknown` of the model structure; indices are 1-based into `model_variables`.
/// `dependencies: None` means "depends on all knowns", `Some(vec![])` means "on none".
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Unknown {
    pub index: usize,
    pub dependencies: Option<Vec<usize>>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelStructure {
    pub outputs: Vec<Unknown>,
    pub derivatives: Vec<Unknown>,
    pub initial_unknowns: Vec<Unknown>,
}

impl ModelDescription {
    /// The 1-based index of the variable called `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.model_variables
            .iter()
            .position(|v| v.name == name)
            .map(|i| i + 1)
    }

    /// The variable called `name`.
    pub fn variable(&self, name: &str) -> Option<&ScalarVariable> {
        self.model_variables.iter().find(|v| v.name == name)
    }

    pub fn to_xml(&self) -> String {
        write::to_xml(self)
    }

    /// The FMI 3.0 `modelDescription.xml` of the same model (see `write3`).
    pub fn to_fmi3_xml(&self) -> String {
        write3::to_fmi3_xml(self)
    }

    pub fn from_xml(xml: &str) -> Result<Self, ReadError> {
        read::from_xml(xml)
    }
}

impl Causality {
    pub fn as_str(self) -> &'static str {
        match self {
            Causality::Parameter => "parameter",
            Causality::CalculatedParameter => "calculatedParameter",
            Causality::Input => "input",
            Causality::Output => "output",
            Causality::Local => "local",
            Causality::Independent => "independent",
        }
    }
    fn parse(s: &str) -> Option<Self> {
        [
            Causality::Parameter,
            Causality::CalculatedParameter,
            Causality::Input,
            Causality::Output,
            Causality::Local,
            Causality::Independent,
        ]
        .into_iter()
        .find(|c| c.as_str() == s)
    }
}

impl Variability {
    pub fn as_str(self) -> &'static str {
        match self {
            Variability::Constant => "constant",
            Variability::Fixed => "fixed",
            Variability::Tunable => "tunable",
            Variability::Discrete => "discrete",
            Variability::Continuous => "continuous",
        }
    }
    fn parse(s: &str) -> Option<Self> {
        [
            Variability::Constant,
            Variability::Fixed,
            Variability::Tunable,
            Variability::Discrete,
            Variability::Continuous,
        ]
        .into_iter()
        .find(|c| c.as_str() == s)
    }
}

impl Initial {
    pub fn as_str(self) -> &'static str {
        match self {
            Initial::Exact => "exact",
            Initial::Approx => "approx",
            Initial::Calculated => "calculated",
        }
    }
    fn parse(s: &str) -> Option<Self> {
        [Initial::Exact, Initial::Approx, Initial::Calculated]
            .into_iter()
            .find(|c| c.as_str() == s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ModelDescription {
        ModelDescription {
            model_name: "Sample".into(),
            guid: "{0000-1}".into(),
            description: "a <sample> & \"quotes\"".into(),
            author: "me".into(),
            version: "1.0".into(),
            generation_tool: "tool".into(),
            generation_date_and_time: "2026-11-21T00:00:00Z".into(),
            number_of_event_indicators: 2,
            model_exchange: Some(ModelExchange {
                model_identifier: "Sample".into(),
                completed_integrator_step_not_needed: true,
                can_get_and_set_fmu_state: true,
                can_serialize_fmu_state: true,
                provides_directional_derivative: false,
                can_not_use_memory_management_functions: true,
            }),
            co_simulation: CoSimulation {
                model_identifier: "Sample".into(),
                can_handle_variable_communication_step_size: true,
                can_interpolate_inputs: true,
                max_output_derivative_order: 0,
                can_get_and_set_fmu_state: true,
                can_serialize_fmu_state: true,
                provides_directional_derivative: false,
                can_not_use_memory_management_functions: true,
            },
            unit_definitions: vec![Unit {
                name: "rad/s".into(),
                base_unit: BaseUnit {
                    s: -1,
                    rad: 1,
                    factor: 1.0,
                    ..Default::default()
                },
                display_units: vec![DisplayUnit {
                    name: "rpm".into(),
                    factor: 9.549296585513721,
                    offset: 0.0,
                }],
            }],
            log_categories: vec![LogCategory {
                name: "logAll".into(),
                description: "all".into(),
            }],
            default_experiment: Some(DefaultExperiment {
                start_time: 0.0,
                stop_time: 2.0,
                tolerance: 1e-8,
                step_size: 1e-3,
            }),
            model_variables: vec![
                ScalarVariable {
                    name: "x".into(),
                    value_reference: 0,
                    description: "state".into(),
                    causality: Causality::Output,
                    variability: Variability::Continuous,
                    initial: None,
                    kind: VariableType::Real {
                        start: None,
                        unit: Some("rad/s".into()),
                        display_unit: Some("rpm".into()),
                        min: None,
                        max: None,
                        derivative: None,
                    },
                },
                ScalarVariable {
                    name: "der(x)".into(),
                    value_reference: 1,
                    description: String::new(),
                    causality: Causality::Local,
                    variability: Variability::Continuous,
                    initial: Some(Initial::Calculated),
                    kind: VariableType::Real {
                        start: None,
                        unit: None,
                        display_unit: None,
                        min: Some(-1.5),
                        max: Some(1e300),
                        derivative: Some(1),
                    },
                },
                ScalarVariable {
                    name: "n".into(),
                    value_reference: 2,
                    description: "count".into(),
                    causality: Causality::Parameter,
                    variability: Variability::Fixed,
                    initial: Some(Initial::Exact),
                    kind: VariableType::Integer {
                        start: Some(-3),
                        min: Some(-10),
                        max: None,
                    },
                },
                ScalarVariable {
                    name: "b".into(),
                    value_reference: 3,
                    description: "flag".into(),
                    causality: Causality::Input,
                    variability: Variability::Discrete,
                    initial: None,
                    kind: VariableType::Boolean { start: Some(true) },
                },
            ],
            model_structure: ModelStructure {
                outputs: vec![Unknown {
                    index: 1,
                    dependencies: Some(vec![1]),
                }],
                derivatives: vec![Unknown {
                    index: 2,
                    dependencies: Some(vec![]),
                }],
                initial_unknowns: vec![Unknown {
                    index: 1,
                    dependencies: None,
                }],
            },
        }
    }

    #[test]
    fn round_trip_is_lossless() {
        let md = sample();
        let xml = md.to_xml();
        let back = ModelDescription::from_xml(&xml).expect("parse");
        assert_eq!(md, back);
        // Floats are written in their shortest exact form.
        assert!(xml.contains("factor=\"9.549296585513721\""), "{xml}");
        assert!(xml.contains("&lt;sample&gt;"));
    }

    #[test]
    fn elements_are_in_schema_order() {
        let xml = sample().to_xml();
        let order = [
            "<ModelExchange",
            "<CoSimulation",
            "<UnitDefinitions",
            "<LogCategories",
            "<DefaultExperiment",
            "<ModelVariables",
            "<ModelStructure",
        ];
        let pos: Vec<usize> = order.iter().map(|e| xml.find(e).expect(e)).collect();
        assert!(pos.windows(2).all(|w| w[0] < w[1]), "{xml}");
    }

    #[test]
    fn rejects_garbage() {
        assert!(ModelDescription::from_xml("<notFmi/>").is_err());
        assert!(ModelDescription::from_xml("<fmiModelDescription").is_err());
        let bad_causality = sample().to_xml().replace("\"output\"", "\"sideways\"");
        assert!(ModelDescription::from_xml(&bad_causality).is_err());
    }
}
