//! The exported C symbols of a component FMU: [`crate::export_fmu!`] writes every FMI 2.0
//! function, each a thin call into [`super::ffi`].

/// Exports the whole FMI 2.0 Co-Simulation and Model Exchange API for a model type, plus two
/// functions
/// (`drivetrain_fmu_describe`, `drivetrain_fmu_free_string`) with which the xtask writes
/// modelDescription.xml and the documentation from the binary's own variable table.
#[macro_export]
macro_rules! export_fmu {
    ($model:ty) => {
        #[allow(non_snake_case, clippy::missing_safety_doc)]
        mod fmi2_exports {
            use super::*;
            use ::std::ffi::{c_char, c_int, c_void};
            use $crate::fmi2::ffi;
            use $crate::fmi2::instance::allowed;
            use $crate::fmi2::logger::CallbackFunctions;
            type M = $model;

            #[no_mangle]
            pub extern "C" fn fmi2GetTypesPlatform() -> *const c_char {
                ffi::types_platform()
            }
            #[no_mangle]
            pub extern "C" fn fmi2GetVersion() -> *const c_char {
                ffi::version()
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2SetDebugLogging(
                c: *mut c_void,
                on: c_int,
                n: usize,
                cats: *const *const c_char,
            ) -> c_int {
                ffi::set_debug_logging::<M>(c, on, n, cats)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2Instantiate(
                name: *const c_char,
                kind: c_int,
                guid: *const c_char,
                resources: *const c_char,
                functions: *const CallbackFunctions,
                visible: c_int,
                logging_on: c_int,
            ) -> *mut c_void {
                ffi::instantiate::<M>(name, kind, guid, resources, functions, visible, logging_on)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2FreeInstance(c: *mut c_void) {
                ffi::free_instance::<M>(c)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2SetupExperiment(
                c: *mut c_void,
                tol_defined: c_int,
                tol: f64,
                start: f64,
                stop_defined: c_int,
                stop: f64,
            ) -> c_int {
                ffi::setup_experiment::<M>(c, tol_defined, tol, start, stop_defined, stop)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2EnterInitializationMode(c: *mut c_void) -> c_int {
                ffi::enter_initialization_mode::<M>(c)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2ExitInitializationMode(c: *mut c_void) -> c_int {
                ffi::exit_initialization_mode::<M>(c)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2Terminate(c: *mut c_void) -> c_int {
                ffi::terminate::<M>(c)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2Reset(c: *mut c_void) -> c_int {
                ffi::reset::<M>(c)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2GetReal(
                c: *mut c_void,
                vr: *const u32,
                n: usize,
                v: *mut f64,
            ) -> c_int {
                ffi::get_real::<M>(c, vr, n, v)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2GetInteger(
                c: *mut c_void,
                vr: *const u32,
                n: usize,
                v: *mut c_int,
            ) -> c_int {
                ffi::get_integer::<M>(c, vr, n, v)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2GetBoolean(
                c: *mut c_void,
                vr: *const u32,
                n: usize,
                _v: *mut c_int,
            ) -> c_int {
                ffi::no_such_type::<M>(c, "fmi2GetBoolean", allowed::GET, vr, n)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2GetString(
                c: *mut c_void,
                vr: *const u32,
                n: usize,
                _v: *mut *const c_char,
            ) -> c_int {
                ffi::no_such_type::<M>(c, "fmi2GetString", allowed::GET, vr, n)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2SetReal(
                c: *mut c_void,
                vr: *const u32,
                n: usize,
                v: *const f64,
            ) -> c_int {
                ffi::set_real::<M>(c, vr, n, v)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2SetInteger(
                c: *mut c_void,
                vr: *const u32,
                n: usize,
                v: *const c_int,
            ) -> c_int {
                ffi::set_integer::<M>(c, vr, n, v)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2SetBoolean(
                c: *mut c_void,
                vr: *const u32,
                n: usize,
                _v: *const c_int,
            ) -> c_int {
                ffi::no_such_type::<M>(c, "fmi2SetBoolean", allowed::SET, vr, n)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2SetString(
                c: *mut c_void,
                vr: *const u32,
                n: usize,
                _v: *const *const c_char,
            ) -> c_int {
                ffi::no_such_type::<M>(c, "fmi2SetString", allowed::SET, vr, n)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2GetFMUstate(c: *mut c_void, s: *mut *mut c_void) -> c_int {
                ffi::get_fmu_state::<M>(c, s)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2SetFMUstate(c: *mut c_void, s: *mut c_void) -> c_int {
                ffi::set_fmu_state::<M>(c, s)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2FreeFMUstate(c: *mut c_void, s: *mut *mut c_void) -> c_int {
                ffi::free_fmu_state::<M>(c, s)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2SerializedFMUstateSize(
                c: *mut c_void,
                s: *mut c_void,
                size: *mut usize,
            ) -> c_int {
                ffi::serialized_size::<M>(c, s, size)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2SerializeFMUstate(
                c: *mut c_void,
                s: *mut c_void,
                bytes: *mut c_char,
                size: usize,
            ) -> c_int {
                ffi::serialize::<M>(c, s, bytes, size)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2DeSerializeFMUstate(
                c: *mut c_void,
                bytes: *const c_char,
                size: usize,
                s: *mut *mut c_void,
            ) -> c_int {
                ffi::deserialize::<M>(c, bytes, size, s)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2GetDirectionalDerivative(
                c: *mut c_void,
                _unknown: *const u32,
                n_unknown: usize,
                _known: *const u32,
                n_known: usize,
                _dv_known: *const f64,
                _dv_unknown: *mut f64,
            ) -> c_int {
                ffi::unsupported::<M>(
                    c,
                    "fmi2GetDirectionalDerivative",
                    n_unknown * n_known,
                    "directional derivatives are not provided (providesDirectionalDerivative=false)",
                )
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2SetRealInputDerivatives(
                c: *mut c_void,
                vr: *const u32,
                n: usize,
                order: *const c_int,
                v: *const f64,
            ) -> c_int {
                ffi::set_input_derivatives::<M>(c, vr, n, order, v)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2GetRealOutputDerivatives(
                c: *mut c_void,
                vr: *const u32,
                n: usize,
                order: *const c_int,
                v: *mut f64,
            ) -> c_int {
                ffi::get_real_output_derivatives::<M>(c, vr, n, order, v)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2SetTime(c: *mut c_void, t: f64) -> c_int {
                ffi::set_time::<M>(c, t)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2SetContinuousStates(
                c: *mut c_void,
                x: *const f64,
                n: usize,
            ) -> c_int {
                ffi::set_continuous_states::<M>(c, x, n)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2GetContinuousStates(
                c: *mut c_void,
                x: *mut f64,
                n: usize,
            ) -> c_int {
                ffi::get_array::<M>(c, "fmi2GetContinuousStates", x, n, |i, v| {
                    i.get_continuous_states(v)
                })
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2GetDerivatives(
                c: *mut c_void,
                dx: *mut f64,
                n: usize,
            ) -> c_int {
                ffi::get_array::<M>(c, "fmi2GetDerivatives", dx, n, |i, v| i.get_derivatives(v))
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2GetEventIndicators(
                c: *mut c_void,
                z: *mut f64,
                n: usize,
            ) -> c_int {
                ffi::get_array::<M>(c, "fmi2GetEventIndicators", z, n, |i, v| {
                    i.get_event_indicators(v)
                })
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2GetNominalsOfContinuousStates(
                c: *mut c_void,
                x: *mut f64,
                n: usize,
            ) -> c_int {
                ffi::get_array::<M>(c, "fmi2GetNominalsOfContinuousStates", x, n, |i, v| {
                    i.get_nominals(v)
                })
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2EnterEventMode(c: *mut c_void) -> c_int {
                ffi::enter_event_mode::<M>(c)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2NewDiscreteStates(
                c: *mut c_void,
                info: *mut ffi::EventInfo,
            ) -> c_int {
                ffi::new_discrete_states::<M>(c, info)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2EnterContinuousTimeMode(c: *mut c_void) -> c_int {
                ffi::enter_continuous_time_mode::<M>(c)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2CompletedIntegratorStep(
                c: *mut c_void,
                no_prior: c_int,
                enter_event_mode: *mut c_int,
                terminate: *mut c_int,
            ) -> c_int {
                ffi::completed_integrator_step::<M>(c, no_prior, enter_event_mode, terminate)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2DoStep(
                c: *mut c_void,
                tc: f64,
                h: f64,
                no_prior: c_int,
            ) -> c_int {
                ffi::do_step::<M>(c, tc, h, no_prior)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2CancelStep(c: *mut c_void) -> c_int {
                ffi::cancel_step::<M>(c)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2GetStatus(
                c: *mut c_void,
                _kind: c_int,
                _v: *mut c_int,
            ) -> c_int {
                ffi::no_status::<M>(c, "fmi2GetStatus")
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2GetRealStatus(
                c: *mut c_void,
                kind: c_int,
                v: *mut f64,
            ) -> c_int {
                ffi::get_real_status::<M>(c, kind, v)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2GetIntegerStatus(
                c: *mut c_void,
                _kind: c_int,
                _v: *mut c_int,
            ) -> c_int {
                ffi::no_status::<M>(c, "fmi2GetIntegerStatus")
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2GetBooleanStatus(
                c: *mut c_void,
                kind: c_int,
                v: *mut c_int,
            ) -> c_int {
                ffi::get_boolean_status::<M>(c, kind, v)
            }
            #[no_mangle]
            pub unsafe extern "C" fn fmi2GetStringStatus(
                c: *mut c_void,
                _kind: c_int,
                _v: *mut *const c_char,
            ) -> c_int {
                ffi::no_status::<M>(c, "fmi2GetStringStatus")
            }
            #[no_mangle]
            pub unsafe extern "C" fn drivetrain_fmu_describe(
                what: c_int,
                timestamp: *const c_char,
            ) -> *mut c_char {
                ffi::describe::<M>(what, timestamp)
            }
            #[no_mangle]
            pub unsafe extern "C" fn drivetrain_fmu_free_string(s: *mut c_char) {
                ffi::free_string(s)
            }
        }
    };
}
