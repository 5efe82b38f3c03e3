//! The FMI 2.0 and 3.0 C interfaces, once: their types, laid out as in `fmi2TypesPlatform.h`,
//! `fmi2FunctionTypes.h` and their FMI 3.0 namesakes, and the lists of their functions
//! ([`fmi2_functions!`], [`fmi3_functions!`]), from which the runtime writes an FMU's exports
//! and the test importers their tables of function pointers.

pub mod fmi2 {
    use std::ffi::{c_char, c_int, c_void};

    /// `fmi2Status`.
    pub type Status = c_int;
    pub const OK: Status = 0;
    pub const WARNING: Status = 1;
    pub const DISCARD: Status = 2;
    pub const ERROR: Status = 3;
    pub const FATAL: Status = 4;

    /// `fmi2Component`.
    pub type Component = *mut c_void;
    /// `fmi2ValueReference`.
    pub type ValueReference = u32;
    /// `fmi2Boolean`, `fmi2Integer`.
    pub type Boolean = c_int;
    /// `fmi2FMUstate`.
    pub type FmuState = *mut c_void;

    /// `fmi2Type`: what `fmi2Instantiate` creates.
    pub const MODEL_EXCHANGE: c_int = 0;
    pub const CO_SIMULATION: c_int = 1;

    /// `fmi2CallbackLogger`.
    pub type Logger = unsafe extern "C" fn(
        env: *mut c_void,
        instance_name: *const c_char,
        status: Status,
        category: *const c_char,
        message: *const c_char,
        ...
    );

    /// `fmi2CallbackFunctions`.
    #[repr(C)]
    pub struct CallbackFunctions {
        pub logger: Option<Logger>,
        pub allocate_memory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
        pub free_memory: Option<unsafe extern "C" fn(*mut c_void)>,
        pub step_finished: Option<unsafe extern "C" fn(*mut c_void, Status)>,
        pub component_environment: *mut c_void,
    }

    /// `fmi2EventInfo`.
    #[repr(C)]
    #[derive(Debug, Clone, Copy, Default, PartialEq)]
    pub struct EventInfo {
        pub new_discrete_states_needed: Boolean,
        pub terminate_simulation: Boolean,
        pub nominals_of_continuous_states_changed: Boolean,
        pub values_of_continuous_states_changed: Boolean,
        pub next_event_time_defined: Boolean,
        pub next_event_time: f64,
    }
}

/// Every function of FMI 2.0, Co-Simulation and Model Exchange, as
/// `symbol snake_name (argument: type, ...) -> return type;`, handed to the macro `$callback`
/// after the tokens `$pass` (in parentheses): the runtime writes each export from it, the test
/// importers their function table.
#[macro_export]
macro_rules! fmi2_functions {
    ($callback:path, $($pass:tt)*) => {
        $callback! {
            ($($pass)*)
            fmi2GetTypesPlatform get_types_platform () -> *const ::std::ffi::c_char;
            fmi2GetVersion get_version () -> *const ::std::ffi::c_char;
            fmi2SetDebugLogging set_debug_logging (c: $crate::fmi2::Component, logging_on: $crate::fmi2::Boolean, n: usize, categories: *const *const ::std::ffi::c_char) -> $crate::fmi2::Status;
            fmi2Instantiate instantiate (name: *const ::std::ffi::c_char, kind: ::std::ffi::c_int, guid: *const ::std::ffi::c_char, resources: *const ::std::ffi::c_char, functions: *const $crate::fmi2::CallbackFunctions, visible: $crate::fmi2::Boolean, logging_on: $crate::fmi2::Boolean) -> $crate::fmi2::Component;
            fmi2FreeInstance free_instance (c: $crate::fmi2::Component) -> ();
            fmi2SetupExperiment setup_experiment (c: $crate::fmi2::Component, tolerance_defined: $crate::fmi2::Boolean, tolerance: f64, start: f64, stop_defined: $crate::fmi2::Boolean, stop: f64) -> $crate::fmi2::Status;
            fmi2EnterInitializationMode enter_initialization_mode (c: $crate::fmi2::Component) -> $crate::fmi2::Status;
            fmi2ExitInitializationMode exit_initialization_mode (c: $crate::fmi2::Component) -> $crate::fmi2::Status;
            fmi2Terminate terminate (c: $crate::fmi2::Component) -> $crate::fmi2::Status;
            fmi2Reset reset (c: $crate::fmi2::Component) -> $crate::fmi2::Status;
            fmi2GetReal get_real (c: $crate::fmi2::Component, vr: *const $crate::fmi2::ValueReference, n: usize, values: *mut f64) -> $crate::fmi2::Status;
            fmi2GetInteger get_integer (c: $crate::fmi2::Component, vr: *const $crate::fmi2::ValueReference, n: usize, values: *mut ::std::ffi::c_int) -> $crate::fmi2::Status;
            fmi2GetBoolean get_boolean (c: $crate::fmi2::Component, vr: *const $crate::fmi2::ValueReference, n: usize, values: *mut $crate::fmi2::Boolean) -> $crate::fmi2::Status;
            fmi2GetString get_string (c: $crate::fmi2::Component, vr: *const $crate::fmi2::ValueReference, n: usize, values: *mut *const ::std::ffi::c_char) -> $crate::fmi2::Status;
            fmi2SetReal set_real (c: $crate::fmi2::Component, vr: *const $crate::fmi2::ValueReference, n: usize, values: *const f64) -> $crate::fmi2::Status;
            fmi2SetInteger set_integer (c: $crate::fmi2::Component, vr: *const $crate::fmi2::ValueReference, n: usize, values: *const ::std::ffi::c_int) -> $crate::fmi2::Status;
            fmi2SetBoolean set_boolean (c: $crate::fmi2::Component, vr: *const $crate::fmi2::ValueReference, n: usize, values: *const $crate::fmi2::Boolean) -> $crate::fmi2::Status;
            fmi2SetString set_string (c: $crate::fmi2::Component, vr: *const $crate::fmi2::ValueReference, n: usize, values: *const *const ::std::ffi::c_char) -> $crate::fmi2::Status;
            fmi2GetFMUstate get_fmu_state (c: $crate::fmi2::Component, state: *mut $crate::fmi2::FmuState) -> $crate::fmi2::Status;
            fmi2SetFMUstate set_fmu_state (c: $crate::fmi2::Component, state: $crate::fmi2::FmuState) -> $crate::fmi2::Status;
            fmi2FreeFMUstate free_fmu_state (c: $crate::fmi2::Component, state: *mut $crate::fmi2::FmuState) -> $crate::fmi2::Status;
            fmi2SerializedFMUstateSize serialized_fmu_state_size (c: $crate::fmi2::Component, state: $crate::fmi2::FmuState, size: *mut usize) -> $crate::fmi2::Status;
            fmi2SerializeFMUstate serialize_fmu_state (c: $crate::fmi2::Component, state: $crate::fmi2::FmuState, bytes: *mut ::std::ffi::c_char, size: usize) -> $crate::fmi2::Status;
            fmi2DeSerializeFMUstate deserialize_fmu_state (c: $crate::fmi2::Component, bytes: *const ::std::ffi::c_char, size: usize, state: *mut $crate::fmi2::FmuState) -> $crate::fmi2::Status;
            fmi2GetDirectionalDerivative get_directional_derivative (c: $crate::fmi2::Component, unknowns: *const $crate::fmi2::ValueReference, n_unknowns: usize, knowns: *const $crate::fmi2::ValueReference, n_knowns: usize, seed: *const f64, sensitivity: *mut f64) -> $crate::fmi2::Status;
            fmi2SetRealInputDerivatives set_real_input_derivatives (c: $crate::fmi2::Component, vr: *const $crate::fmi2::ValueReference, n: usize, order: *const ::std::ffi::c_int, values: *const f64) -> $crate::fmi2::Status;
            fmi2GetRealOutputDerivatives get_real_output_derivatives (c: $crate::fmi2::Component, vr: *const $crate::fmi2::ValueReference, n: usize, order: *const ::std::ffi::c_int, values: *mut f64) -> $crate::fmi2::Status;
            fmi2DoStep do_step (c: $crate::fmi2::Component, current_communication_point: f64, communication_step_size: f64, no_set_fmu_state_prior: $crate::fmi2::Boolean) -> $crate::fmi2::Status;
            fmi2CancelStep cancel_step (c: $crate::fmi2::Component) -> $crate::fmi2::Status;
            fmi2GetStatus get_status (c: $crate::fmi2::Component, kind: ::std::ffi::c_int, value: *mut ::std::ffi::c_int) -> $crate::fmi2::Status;
            fmi2GetRealStatus get_real_status (c: $crate::fmi2::Component, kind: ::std::ffi::c_int, value: *mut f64) -> $crate::fmi2::Status;
            fmi2GetIntegerStatus get_integer_status (c: $crate::fmi2::Component, kind: ::std::ffi::c_int, value: *mut ::std::ffi::c_int) -> $crate::fmi2::Status;
            fmi2GetBooleanStatus get_boolean_status (c: $crate::fmi2::Component, kind: ::std::ffi::c_int, value: *mut $crate::fmi2::Boolean) -> $crate::fmi2::Status;
            fmi2GetStringStatus get_string_status (c: $crate::fmi2::Component, kind: ::std::ffi::c_int, value: *mut *const ::std::ffi::c_char) -> $crate::fmi2::Status;
            fmi2SetTime set_time (c: $crate::fmi2::Component, time: f64) -> $crate::fmi2::Status;
            fmi2SetContinuousStates set_continuous_states (c: $crate::fmi2::Component, x: *const f64, n: usize) -> $crate::fmi2::Status;
            fmi2GetContinuousStates get_continuous_states (c: $crate::fmi2::Component, x: *mut f64, n: usize) -> $crate::fmi2::Status;
            fmi2GetDerivatives get_derivatives (c: $crate::fmi2::Component, dx: *mut f64, n: usize) -> $crate::fmi2::Status;
            fmi2GetEventIndicators get_event_indicators (c: $crate::fmi2::Component, z: *mut f64, n: usize) -> $crate::fmi2::Status;
            fmi2GetNominalsOfContinuousStates get_nominals_of_continuous_states (c: $crate::fmi2::Component, x: *mut f64, n: usize) -> $crate::fmi2::Status;
            fmi2EnterEventMode enter_event_mode (c: $crate::fmi2::Component) -> $crate::fmi2::Status;
            fmi2NewDiscreteStates new_discrete_states (c: $crate::fmi2::Component, info: *mut $crate::fmi2::EventInfo) -> $crate::fmi2::Status;
            fmi2EnterContinuousTimeMode enter_continuous_time_mode (c: $crate::fmi2::Component) -> $crate::fmi2::Status;
            fmi2CompletedIntegratorStep completed_integrator_step (c: $crate::fmi2::Component, no_set_fmu_state_prior: $crate::fmi2::Boolean, enter_event_mode: *mut $crate::fmi2::Boolean, terminate_simulation: *mut $crate::fmi2::Boolean) -> $crate::fmi2::Status;
        }
    };
}

/// The FMI 3.0 C interface: types as in `fmi3PlatformTypes.h` and `fmi3FunctionTypes.h`.
/// `fmi3Boolean` is C's `bool`, one byte.
pub mod fmi3 {
    use std::ffi::{c_char, c_int, c_void};

    /// `fmi3Status`.
    pub type Status = c_int;
    pub const OK: Status = 0;
    pub const WARNING: Status = 1;
    pub const DISCARD: Status = 2;
    pub const ERROR: Status = 3;
    pub const FATAL: Status = 4;

    /// `fmi3Instance`.
    pub type Instance = *mut c_void;
    /// `fmi3InstanceEnvironment`.
    pub type Environment = *mut c_void;
    /// `fmi3FMUState`.
    pub type FmuState = *mut c_void;
    /// `fmi3ValueReference`.
    pub type ValueReference = u32;
    /// `fmi3String`.
    pub type Str = *const c_char;
    /// `fmi3Binary`.
    pub type Binary = *const u8;
    /// `fmi3DependencyKind`, `fmi3IntervalQualifier`: C enums.
    pub type DependencyKind = c_int;
    pub type IntervalQualifier = c_int;
    /// `fmi3Dependent`: the only kind these models declare.
    pub const DEPENDENT: DependencyKind = 5;

    /// `fmi3LogMessageCallback`.
    pub type LogMessage =
        unsafe extern "C" fn(env: Environment, status: Status, category: Str, message: Str);

    /// `fmi3IntermediateUpdateCallback`.
    pub type IntermediateUpdate = unsafe extern "C" fn(
        env: Environment,
        intermediate_update_time: f64,
        intermediate_variable_set_requested: bool,
        intermediate_variable_get_allowed: bool,
        intermediate_step_finished: bool,
        can_return_early: bool,
        early_return_requested: *mut bool,
        early_return_time: *mut f64,
    );

    /// `fmi3ClockUpdateCallback`.
    pub type ClockUpdate = unsafe extern "C" fn(env: Environment);
    /// `fmi3LockPreemptionCallback`, `fmi3UnlockPreemptionCallback`.
    pub type Preemption = unsafe extern "C" fn();
}

/// Every function of FMI 3.0 (Model Exchange, Co-Simulation, Scheduled Execution), in the
/// form of [`fmi2_functions!`].
#[macro_export]
macro_rules! fmi3_functions {
    ($callback:path, $($pass:tt)*) => {
        $callback! {
            ($($pass)*)
            fmi3GetVersion get_version () -> *const ::std::ffi::c_char;
            fmi3SetDebugLogging set_debug_logging (c: $crate::fmi3::Instance, logging_on: bool, n: usize, categories: *const $crate::fmi3::Str) -> $crate::fmi3::Status;
            fmi3InstantiateModelExchange instantiate_model_exchange (name: $crate::fmi3::Str, token: $crate::fmi3::Str, resources: $crate::fmi3::Str, visible: bool, logging_on: bool, env: $crate::fmi3::Environment, log: Option<$crate::fmi3::LogMessage>) -> $crate::fmi3::Instance;
            fmi3InstantiateCoSimulation instantiate_co_simulation (name: $crate::fmi3::Str, token: $crate::fmi3::Str, resources: $crate::fmi3::Str, visible: bool, logging_on: bool, event_mode_used: bool, early_return_allowed: bool, required: *const $crate::fmi3::ValueReference, n_required: usize, env: $crate::fmi3::Environment, log: Option<$crate::fmi3::LogMessage>, update: Option<$crate::fmi3::IntermediateUpdate>) -> $crate::fmi3::Instance;
            fmi3InstantiateScheduledExecution instantiate_scheduled_execution (name: $crate::fmi3::Str, token: $crate::fmi3::Str, resources: $crate::fmi3::Str, visible: bool, logging_on: bool, env: $crate::fmi3::Environment, log: Option<$crate::fmi3::LogMessage>, clock: Option<$crate::fmi3::ClockUpdate>, lock: Option<$crate::fmi3::Preemption>, unlock: Option<$crate::fmi3::Preemption>) -> $crate::fmi3::Instance;
            fmi3FreeInstance free_instance (c: $crate::fmi3::Instance) -> ();
            fmi3EnterInitializationMode enter_initialization_mode (c: $crate::fmi3::Instance, tolerance_defined: bool, tolerance: f64, start: f64, stop_defined: bool, stop: f64) -> $crate::fmi3::Status;
            fmi3ExitInitializationMode exit_initialization_mode (c: $crate::fmi3::Instance) -> $crate::fmi3::Status;
            fmi3EnterEventMode enter_event_mode (c: $crate::fmi3::Instance) -> $crate::fmi3::Status;
            fmi3Terminate terminate (c: $crate::fmi3::Instance) -> $crate::fmi3::Status;
            fmi3Reset reset (c: $crate::fmi3::Instance) -> $crate::fmi3::Status;
            fmi3GetFloat32 get_float32 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *mut f32, n_values: usize) -> $crate::fmi3::Status;
            fmi3GetFloat64 get_float64 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *mut f64, n_values: usize) -> $crate::fmi3::Status;
            fmi3GetInt8 get_int8 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *mut i8, n_values: usize) -> $crate::fmi3::Status;
            fmi3GetUInt8 get_uint8 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *mut u8, n_values: usize) -> $crate::fmi3::Status;
            fmi3GetInt16 get_int16 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *mut i16, n_values: usize) -> $crate::fmi3::Status;
            fmi3GetUInt16 get_uint16 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *mut u16, n_values: usize) -> $crate::fmi3::Status;
            fmi3GetInt32 get_int32 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *mut i32, n_values: usize) -> $crate::fmi3::Status;
            fmi3GetUInt32 get_uint32 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *mut u32, n_values: usize) -> $crate::fmi3::Status;
            fmi3GetInt64 get_int64 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *mut i64, n_values: usize) -> $crate::fmi3::Status;
            fmi3GetUInt64 get_uint64 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *mut u64, n_values: usize) -> $crate::fmi3::Status;
            fmi3GetBoolean get_boolean (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *mut bool, n_values: usize) -> $crate::fmi3::Status;
            fmi3GetString get_string (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *mut $crate::fmi3::Str, n_values: usize) -> $crate::fmi3::Status;
            fmi3GetBinary get_binary (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, sizes: *mut usize, values: *mut $crate::fmi3::Binary, n_values: usize) -> $crate::fmi3::Status;
            fmi3GetClock get_clock (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *mut bool) -> $crate::fmi3::Status;
            fmi3SetFloat32 set_float32 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *const f32, n_values: usize) -> $crate::fmi3::Status;
            fmi3SetFloat64 set_float64 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *const f64, n_values: usize) -> $crate::fmi3::Status;
            fmi3SetInt8 set_int8 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *const i8, n_values: usize) -> $crate::fmi3::Status;
            fmi3SetUInt8 set_uint8 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *const u8, n_values: usize) -> $crate::fmi3::Status;
            fmi3SetInt16 set_int16 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *const i16, n_values: usize) -> $crate::fmi3::Status;
            fmi3SetUInt16 set_uint16 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *const u16, n_values: usize) -> $crate::fmi3::Status;
            fmi3SetInt32 set_int32 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *const i32, n_values: usize) -> $crate::fmi3::Status;
            fmi3SetUInt32 set_uint32 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *const u32, n_values: usize) -> $crate::fmi3::Status;
            fmi3SetInt64 set_int64 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *const i64, n_values: usize) -> $crate::fmi3::Status;
            fmi3SetUInt64 set_uint64 (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *const u64, n_values: usize) -> $crate::fmi3::Status;
            fmi3SetBoolean set_boolean (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *const bool, n_values: usize) -> $crate::fmi3::Status;
            fmi3SetString set_string (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *const $crate::fmi3::Str, n_values: usize) -> $crate::fmi3::Status;
            fmi3SetBinary set_binary (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, sizes: *const usize, values: *const $crate::fmi3::Binary, n_values: usize) -> $crate::fmi3::Status;
            fmi3SetClock set_clock (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, values: *const bool) -> $crate::fmi3::Status;
            fmi3GetNumberOfVariableDependencies get_number_of_variable_dependencies (c: $crate::fmi3::Instance, vr: $crate::fmi3::ValueReference, n: *mut usize) -> $crate::fmi3::Status;
            fmi3GetVariableDependencies get_variable_dependencies (c: $crate::fmi3::Instance, dependent: $crate::fmi3::ValueReference, element_of_dependent: *mut usize, independents: *mut $crate::fmi3::ValueReference, element_of_independents: *mut usize, kinds: *mut $crate::fmi3::DependencyKind, n: usize) -> $crate::fmi3::Status;
            fmi3GetFMUState get_fmu_state (c: $crate::fmi3::Instance, state: *mut $crate::fmi3::FmuState) -> $crate::fmi3::Status;
            fmi3SetFMUState set_fmu_state (c: $crate::fmi3::Instance, state: $crate::fmi3::FmuState) -> $crate::fmi3::Status;
            fmi3FreeFMUState free_fmu_state (c: $crate::fmi3::Instance, state: *mut $crate::fmi3::FmuState) -> $crate::fmi3::Status;
            fmi3SerializedFMUStateSize serialized_fmu_state_size (c: $crate::fmi3::Instance, state: $crate::fmi3::FmuState, size: *mut usize) -> $crate::fmi3::Status;
            fmi3SerializeFMUState serialize_fmu_state (c: $crate::fmi3::Instance, state: $crate::fmi3::FmuState, bytes: *mut u8, size: usize) -> $crate::fmi3::Status;
            fmi3DeserializeFMUState deserialize_fmu_state (c: $crate::fmi3::Instance, bytes: *const u8, size: usize, state: *mut $crate::fmi3::FmuState) -> $crate::fmi3::Status;
            fmi3GetDirectionalDerivative get_directional_derivative (c: $crate::fmi3::Instance, unknowns: *const $crate::fmi3::ValueReference, n_unknowns: usize, knowns: *const $crate::fmi3::ValueReference, n_knowns: usize, seed: *const f64, n_seed: usize, sensitivity: *mut f64, n_sensitivity: usize) -> $crate::fmi3::Status;
            fmi3GetAdjointDerivative get_adjoint_derivative (c: $crate::fmi3::Instance, unknowns: *const $crate::fmi3::ValueReference, n_unknowns: usize, knowns: *const $crate::fmi3::ValueReference, n_knowns: usize, seed: *const f64, n_seed: usize, sensitivity: *mut f64, n_sensitivity: usize) -> $crate::fmi3::Status;
            fmi3EnterConfigurationMode enter_configuration_mode (c: $crate::fmi3::Instance) -> $crate::fmi3::Status;
            fmi3ExitConfigurationMode exit_configuration_mode (c: $crate::fmi3::Instance) -> $crate::fmi3::Status;
            fmi3GetIntervalDecimal get_interval_decimal (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, intervals: *mut f64, qualifiers: *mut $crate::fmi3::IntervalQualifier) -> $crate::fmi3::Status;
            fmi3GetIntervalFraction get_interval_fraction (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, counters: *mut u64, resolutions: *mut u64, qualifiers: *mut $crate::fmi3::IntervalQualifier) -> $crate::fmi3::Status;
            fmi3GetShiftDecimal get_shift_decimal (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, shifts: *mut f64) -> $crate::fmi3::Status;
            fmi3GetShiftFraction get_shift_fraction (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, counters: *mut u64, resolutions: *mut u64) -> $crate::fmi3::Status;
            fmi3SetIntervalDecimal set_interval_decimal (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, intervals: *const f64) -> $crate::fmi3::Status;
            fmi3SetIntervalFraction set_interval_fraction (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, counters: *const u64, resolutions: *const u64) -> $crate::fmi3::Status;
            fmi3SetShiftDecimal set_shift_decimal (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, shifts: *const f64) -> $crate::fmi3::Status;
            fmi3SetShiftFraction set_shift_fraction (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, counters: *const u64, resolutions: *const u64) -> $crate::fmi3::Status;
            fmi3EvaluateDiscreteStates evaluate_discrete_states (c: $crate::fmi3::Instance) -> $crate::fmi3::Status;
            fmi3UpdateDiscreteStates update_discrete_states (c: $crate::fmi3::Instance, discrete_states_need_update: *mut bool, terminate_simulation: *mut bool, nominals_changed: *mut bool, values_changed: *mut bool, next_event_time_defined: *mut bool, next_event_time: *mut f64) -> $crate::fmi3::Status;
            fmi3EnterContinuousTimeMode enter_continuous_time_mode (c: $crate::fmi3::Instance) -> $crate::fmi3::Status;
            fmi3CompletedIntegratorStep completed_integrator_step (c: $crate::fmi3::Instance, no_set_fmu_state_prior: bool, enter_event_mode: *mut bool, terminate_simulation: *mut bool) -> $crate::fmi3::Status;
            fmi3SetTime set_time (c: $crate::fmi3::Instance, time: f64) -> $crate::fmi3::Status;
            fmi3SetContinuousStates set_continuous_states (c: $crate::fmi3::Instance, x: *const f64, n: usize) -> $crate::fmi3::Status;
            fmi3GetContinuousStateDerivatives get_continuous_state_derivatives (c: $crate::fmi3::Instance, dx: *mut f64, n: usize) -> $crate::fmi3::Status;
            fmi3GetEventIndicators get_event_indicators (c: $crate::fmi3::Instance, z: *mut f64, n: usize) -> $crate::fmi3::Status;
            fmi3GetContinuousStates get_continuous_states (c: $crate::fmi3::Instance, x: *mut f64, n: usize) -> $crate::fmi3::Status;
            fmi3GetNominalsOfContinuousStates get_nominals_of_continuous_states (c: $crate::fmi3::Instance, x: *mut f64, n: usize) -> $crate::fmi3::Status;
            fmi3GetNumberOfEventIndicators get_number_of_event_indicators (c: $crate::fmi3::Instance, n: *mut usize) -> $crate::fmi3::Status;
            fmi3GetNumberOfContinuousStates get_number_of_continuous_states (c: $crate::fmi3::Instance, n: *mut usize) -> $crate::fmi3::Status;
            fmi3EnterStepMode enter_step_mode (c: $crate::fmi3::Instance) -> $crate::fmi3::Status;
            fmi3GetOutputDerivatives get_output_derivatives (c: $crate::fmi3::Instance, vr: *const $crate::fmi3::ValueReference, n: usize, orders: *const i32, values: *mut f64, n_values: usize) -> $crate::fmi3::Status;
            fmi3DoStep do_step (c: $crate::fmi3::Instance, current_communication_point: f64, communication_step_size: f64, no_set_fmu_state_prior: bool, event_handling_needed: *mut bool, terminate_simulation: *mut bool, early_return: *mut bool, last_successful_time: *mut f64) -> $crate::fmi3::Status;
            fmi3ActivateModelPartition activate_model_partition (c: $crate::fmi3::Instance, clock: $crate::fmi3::ValueReference, activation_time: f64) -> $crate::fmi3::Status;
        }
    };
}
