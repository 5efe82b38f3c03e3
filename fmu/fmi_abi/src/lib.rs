//! The FMI 2.0 C interface, once: its types, laid out as in `fmi2TypesPlatform.h` and
//! `fmi2FunctionTypes.h`, and the list of its functions ([`fmi2_functions!`]), from which the
//! runtime writes an FMU's exports and the test importers their table of function pointers.

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
