//! The one declaration of a model variable. Get/set, the FMU state and modelDescription.xml are
//! all derived from it.

pub use model_description::{Causality, Initial, Variability};

/// How the runtime reads and writes a variable's field in the model.
pub enum Access<M> {
    Real {
        get: fn(&M) -> f64,
        set: fn(&mut M, f64),
    },
    Integer {
        get: fn(&M) -> i32,
        set: fn(&mut M, i32),
    },
}

impl<M> Clone for Access<M> {
    fn clone(&self) -> Self {
        match self {
            Access::Real { get, set } => Access::Real {
                get: *get,
                set: *set,
            },
            Access::Integer { get, set } => Access::Integer {
                get: *get,
                set: *set,
            },
        }
    }
}

/// `real!(field)`, `real!(shaft[3].m)`: access to an `f64` place of a part, inside a function
/// that declares a family of its variables,
/// `fn family<L: Lens<Inner = Part>>(vars: &mut Vec<Var<L::Outer>>)` (see `fmu-declare`).
#[macro_export]
macro_rules! real {
    ($($place:tt)+) => {
        $crate::Access::Real {
            get: |m: &L::Outer| <L as $crate::declare::Lens>::get(m).$($place)+,
            set: |m: &mut L::Outer, v| <L as $crate::declare::Lens>::get_mut(m).$($place)+ = v,
        }
    };
}

/// `integer!(field)`: as [`real!`], for an `i32` place.
#[macro_export]
macro_rules! integer {
    ($($place:tt)+) => {
        $crate::Access::Integer {
            get: |m: &L::Outer| <L as $crate::declare::Lens>::get(m).$($place)+,
            set: |m: &mut L::Outer, v| <L as $crate::declare::Lens>::get_mut(m).$($place)+ = v,
        }
    };
}

pub struct Var<M> {
    pub name: &'static str,
    pub causality: Causality,
    pub variability: Variability,
    pub initial: Option<Initial>,
    pub access: Access<M>,
    pub unit: Option<&'static str>,
    pub description: &'static str,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// For a state: the name of the variable that is its time derivative.
    pub derivative: Option<&'static str>,
    /// Name of the state this variable is the time derivative of (linked from the states'
    /// `derivative` when the table is built).
    pub derivative_of: Option<&'static str>,
    /// Names of the inputs and states an output or derivative depends on during a step
    /// (`None`: all of them).
    pub depends_on: Option<&'static [&'static str]>,
    /// Names of the parameters and inputs an initial unknown depends on (`None`: all knowns).
    pub initial_depends_on: Option<&'static [&'static str]>,
}

impl<M> Var<M> {
    fn new(
        name: &'static str,
        causality: Causality,
        initial: Option<Initial>,
        access: Access<M>,
        real_variability: Variability,
    ) -> Self {
        let variability = match (&access, real_variability) {
            (Access::Integer { .. }, Variability::Continuous) => Variability::Discrete,
            (_, v) => v,
        };
        Var {
            name,
            causality,
            variability,
            initial,
            access,
            unit: None,
            description: "",
            min: None,
            max: None,
            derivative: None,
            derivative_of: None,
            depends_on: None,
            initial_depends_on: None,
        }
    }

    /// A fixed parameter; its start value is the field's value in `M::default()`.
    pub fn parameter(name: &'static str, access: Access<M>) -> Self {
        Self::new(
            name,
            Causality::Parameter,
            Some(Initial::Exact),
            access,
            Variability::Fixed,
        )
    }

    /// A parameter computed from the others during initialization.
    pub fn calculated_parameter(name: &'static str, access: Access<M>) -> Self {
        Self::new(
            name,
            Causality::CalculatedParameter,
            Some(Initial::Calculated),
            access,
            Variability::Fixed,
        )
    }

    pub fn input(name: &'static str, access: Access<M>) -> Self {
        Self::new(
            name,
            Causality::Input,
            None,
            access,
            Variability::Continuous,
        )
    }

    pub fn output(name: &'static str, access: Access<M>) -> Self {
        Self::new(
            name,
            Causality::Output,
            None,
            access,
            Variability::Continuous,
        )
    }

    /// The output `tau_support` (N.m) every component with a housing declares, with the sign of
    /// the MSL's `support.tau`: the torque the housing exerts on the component about the shaft
    /// axis, so that the external torques on the component plus `tau_support` equal the rate
    /// of change of the angular momentum it carries. The mount carries `-tau_support`.
    pub fn support_torque(access: Access<M>) -> Self {
        Self::output("tau_support", access)
            .unit("N.m")
            .describe("Torque the housing exerts on the component about the shaft axis (MSL support.tau): external torques + tau_support = rate of change of the angular momentum the component carries; the mount carries -tau_support")
    }

    /// Internal model state that is not an output (a mode, an interval index): declared so
    /// that it is part of the FMU state.
    pub fn local(name: &'static str, access: Access<M>) -> Self {
        Self::new(
            name,
            Causality::Local,
            Some(Initial::Calculated),
            access,
            Variability::Continuous,
        )
    }

    pub fn unit(mut self, unit: &'static str) -> Self {
        self.unit = Some(unit);
        self
    }

    pub fn describe(mut self, description: &'static str) -> Self {
        self.description = description;
        self
    }

    pub fn min(mut self, min: f64) -> Self {
        self.min = Some(min);
        self
    }

    pub fn max(mut self, max: f64) -> Self {
        self.max = Some(max);
        self
    }

    /// A Real that changes only at events (variability discrete).
    pub fn discrete(mut self) -> Self {
        self.variability = Variability::Discrete;
        self
    }

    /// A continuous state whose time derivative is the variable `derivative`.
    pub fn state(mut self, derivative: &'static str) -> Self {
        self.derivative = Some(derivative);
        self
    }

    pub fn depends_on(mut self, names: &'static [&'static str]) -> Self {
        self.depends_on = Some(names);
        self
    }

    pub fn initial_depends_on(mut self, names: &'static [&'static str]) -> Self {
        self.initial_depends_on = Some(names);
        self
    }

    pub fn is_real(&self) -> bool {
        matches!(self.access, Access::Real { .. })
    }

    /// Whether FMI 3.0 declares it `intermediateUpdate="true"`: an importer may read it, and
    /// set it if an input, inside the intermediate update callback.
    pub fn is_intermediate(&self) -> bool {
        self.is_real()
            && model_description::fmi3_extra::intermediate_update(self.causality, self.variability)
    }

    /// Whether the ModelStructure lists it among the initial unknowns (of the model whose table
    /// is `vars`): an output, calculated parameter, state or state derivative whose start value
    /// the model computes. States are the variables a derivative points at.
    pub fn is_initial_unknown(&self, vars: &[Var<M>]) -> bool {
        let calculated = !matches!(self.initial, Some(Initial::Exact))
            && self.causality != Causality::Input
            && self.variability != Variability::Constant;
        let state = vars.iter().any(|v| v.derivative_of == Some(self.name));
        calculated
            && match self.causality {
                Causality::Output | Causality::CalculatedParameter => true,
                _ => self.derivative_of.is_some() || state,
            }
    }

    /// The value as `f64` (integers widened): for the FMU state and the documentation.
    pub fn value(&self, m: &M) -> f64 {
        match &self.access {
            Access::Real { get, .. } => get(m),
            Access::Integer { get, .. } => f64::from(get(m)),
        }
    }

    /// "outside its range [min, max]" if `x` is outside the declared range.
    pub fn range_violation(&self, x: f64) -> Option<String> {
        (self.min.is_some_and(|min| x < min) || self.max.is_some_and(|max| x > max)).then(|| {
            format!(
                "outside its range [{}, {}]",
                self.min.unwrap_or(f64::NEG_INFINITY),
                self.max.unwrap_or(f64::INFINITY)
            )
        })
    }

    /// Whether a set call may write this variable in the given phase (the state tables of
    /// FMI 2.0, section 3.2.3 and 4.2.4, and FMI 3.0, section 3.2): parameters before
    /// initialization ends (every parameter here is fixed), inputs at every communication
    /// point and in Event Mode, and in Continuous-Time Mode the continuous inputs (a discrete
    /// input changes only at an event) and the continuous-time states (FMI 2.0.4 section
    /// 3.2.3, condition 5 of fmi2SetReal; FMI 3.0.2 lists fmi3SetFloat64 beside
    /// fmi3SetContinuousStates to set them): as fmi2SetContinuousStates would.
    pub fn settable(&self, phase: Phase) -> bool {
        if phase == Phase::ContinuousTime && self.derivative.is_some() {
            return true;
        }
        match (self.causality, phase) {
            (Causality::Input, Phase::ContinuousTime) => {
                self.variability == Variability::Continuous
            }
            (Causality::Input, _) => true,
            (Causality::Parameter, Phase::Initialization) => true,
            _ => false,
        }
    }

    /// Why a set call may not write this variable in `phase`, and where it may.
    pub fn not_settable(&self, phase: Phase) -> String {
        let (variability, causality) = (self.variability.as_str(), self.causality.as_str());
        let name = self.name;
        match (self.causality, phase) {
            (Causality::Input, Phase::ContinuousTime) => format!(
                "{name} is a {variability} input and cannot be set in Continuous-Time Mode: set {name} in Event Mode (an input that changes between integrator steps would take effect only at the next event)"
            ),
            (Causality::Parameter, _) => format!(
                "{name} is a {variability} parameter and cannot be set once initialization has ended: set {name} before fmi2ExitInitializationMode / fmi3ExitInitializationMode"
            ),
            _ => format!("{name} is a {variability} {causality} variable and cannot be set"),
        }
    }
}

/// The part of the life cycle that decides which variables may be set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Instantiated or Initialization Mode.
    Initialization = 0,
    /// Co-Simulation between steps, or Model Exchange's Event Mode.
    Stepping = 1,
    /// Model Exchange's Continuous-Time Mode.
    ContinuousTime = 2,
}
