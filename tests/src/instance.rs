//! An FMI 2.0 instance and every call the tests make on it, with the log it records.

use super::*;

#[derive(Debug, Clone)]
pub struct LogLine {
    pub status: Status,
    pub category: String,
    pub message: String,
}

pub(crate) unsafe extern "C" fn record_log(
    env: *mut c_void,
    _instance: *const c_char,
    status: Status,
    category: *const c_char,
    format: *const c_char,
    arg: *const c_char,
) {
    let text = |p: *const c_char| {
        if p.is_null() {
            String::new()
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    };
    let format = text(format);
    let message = if format == "%s" { text(arg) } else { format };
    if let Some(log) = (env as *const Mutex<Vec<LogLine>>).as_ref() {
        log.lock().unwrap().push(LogLine {
            status,
            category: text(category),
            message,
        });
    }
}

/// One instance; freed on drop.
pub struct Instance<'a> {
    pub fmu: &'a Fmu,
    pub c: Component,
    pub(crate) log: Box<Mutex<Vec<LogLine>>>,
    pub(crate) _callbacks: Box<CallbackFunctions>,
}

// The instance is used by one thread at a time, as FMI requires; it may move between threads.
unsafe impl Send for Instance<'_> {}

/// An FMU state owned by the importer.
pub struct FmuState(pub *mut c_void);

impl<'a> Instance<'a> {
    fn api(&self) -> &Api {
        &self.fmu.api
    }

    pub fn log(&self) -> Vec<LogLine> {
        self.log.lock().unwrap().clone()
    }

    /// All logged messages, one per line.
    pub fn log_text(&self) -> String {
        self.log()
            .iter()
            .map(|l| format!("[{}] {}\n", l.category, l.message))
            .collect()
    }

    pub fn clear_log(&self) {
        self.log.lock().unwrap().clear();
    }

    /// fmi2SetDebugLogging with these categories.
    pub fn set_debug_logging(&self, on: bool, categories: &[&str]) -> Status {
        let owned: Vec<CString> = categories
            .iter()
            .map(|c| CString::new(*c).expect("no NUL in a category"))
            .collect();
        let pointers: Vec<*const c_char> = owned.iter().map(|c| c.as_ptr()).collect();
        unsafe {
            (self.fmu.api.set_debug_logging)(
                self.c,
                c_int::from(on),
                pointers.len(),
                pointers.as_ptr(),
            )
        }
    }

    pub fn setup_experiment(
        &self,
        tolerance: Option<f64>,
        start: f64,
        stop: Option<f64>,
    ) -> Status {
        unsafe {
            (self.api().setup_experiment)(
                self.c,
                tolerance.is_some() as c_int,
                tolerance.unwrap_or(0.0),
                start,
                stop.is_some() as c_int,
                stop.unwrap_or(0.0),
            )
        }
    }

    pub fn enter_initialization_mode(&self) -> Status {
        unsafe { (self.api().enter_initialization_mode)(self.c) }
    }

    pub fn exit_initialization_mode(&self) -> Status {
        unsafe { (self.api().exit_initialization_mode)(self.c) }
    }

    /// setupExperiment, parameters by name, enter and exit initialization; panics unless OK.
    pub fn initialize(&self, start: f64, stop: Option<f64>, parameters: &[(&str, f64)]) {
        assert_eq!(
            self.setup_experiment(Some(1e-10), start, stop),
            OK,
            "{}",
            self.log_text()
        );
        for (name, value) in parameters {
            assert_eq!(self.set(name, *value), OK, "{}", self.log_text());
        }
        assert_eq!(self.enter_initialization_mode(), OK, "{}", self.log_text());
        assert_eq!(self.exit_initialization_mode(), OK, "{}", self.log_text());
    }

    pub fn set_real(&self, vrs: &[Vr], values: &[f64]) -> Status {
        assert_eq!(vrs.len(), values.len());
        unsafe { (self.api().set_real)(self.c, vrs.as_ptr(), vrs.len(), values.as_ptr()) }
    }

    pub fn get_real(&self, vrs: &[Vr], values: &mut [f64]) -> Status {
        assert_eq!(vrs.len(), values.len());
        unsafe { (self.api().get_real)(self.c, vrs.as_ptr(), vrs.len(), values.as_mut_ptr()) }
    }

    /// Sets one Real by name.
    pub fn set(&self, name: &str, value: f64) -> Status {
        self.set_real(&[self.fmu.vr(name)], &[value])
    }

    /// Reads one Real by name; panics unless OK.
    pub fn real(&self, name: &str) -> f64 {
        let mut v = [0.0];
        let status = self.get_real(&[self.fmu.vr(name)], &mut v);
        assert_eq!(status, OK, "fmi2GetReal({name}): {}", self.log_text());
        v[0]
    }

    /// Sets one Integer by name.
    pub fn set_int(&self, name: &str, value: c_int) -> Status {
        let vr = [self.fmu.vr(name)];
        unsafe { (self.api().set_integer)(self.c, vr.as_ptr(), 1, &value) }
    }

    /// Reads one Integer by name; panics unless OK.
    pub fn int(&self, name: &str) -> c_int {
        let vr = [self.fmu.vr(name)];
        let mut v: c_int = 0;
        let status = unsafe { (self.api().get_integer)(self.c, vr.as_ptr(), 1, &mut v) };
        assert_eq!(status, OK, "fmi2GetInteger({name}): {}", self.log_text());
        v
    }

    /// Times of the events the FMU logged (category logEvents), in order.
    pub fn event_times(&self) -> Vec<f64> {
        self.log()
            .iter()
            .filter(|l| l.category == "logEvents")
            .filter_map(|l| {
                // "... at t = <time>" or "... at t = <time>: <what changed>"
                let after = l.message.split_once("t = ")?.1;
                after.split(": ").next()?.trim().parse().ok()
            })
            .collect()
    }

    pub fn set_input_derivatives(&self, vrs: &[Vr], orders: &[c_int], values: &[f64]) -> Status {
        unsafe {
            (self.api().set_real_input_derivatives)(
                self.c,
                vrs.as_ptr(),
                vrs.len(),
                orders.as_ptr(),
                values.as_ptr(),
            )
        }
    }

    pub fn set_time(&self, t: f64) -> Status {
        unsafe { (self.fmu.api.set_time)(self.c, t) }
    }

    pub fn set_continuous_states(&self, x: &[f64]) -> Status {
        unsafe { (self.fmu.api.set_continuous_states)(self.c, x.as_ptr(), x.len()) }
    }

    pub fn continuous_states(&self) -> (Status, Vec<f64>) {
        let mut x = vec![0.0; self.fmu.states()];
        let s = unsafe { (self.fmu.api.get_continuous_states)(self.c, x.as_mut_ptr(), x.len()) };
        (s, x)
    }

    pub fn derivatives(&self) -> (Status, Vec<f64>) {
        let mut dx = vec![0.0; self.fmu.states()];
        let s = unsafe { (self.fmu.api.get_derivatives)(self.c, dx.as_mut_ptr(), dx.len()) };
        (s, dx)
    }

    /// fmi2GetDirectionalDerivative: `sensitivity = J seed`, the unknowns by the knowns.
    pub fn directional_derivative(
        &self,
        unknowns: &[Vr],
        knowns: &[Vr],
        seed: &[f64],
        sensitivity: &mut [f64],
    ) -> Status {
        assert_eq!(
            (knowns.len(), unknowns.len()),
            (seed.len(), sensitivity.len())
        );
        unsafe {
            (self.fmu.api.get_directional_derivative)(
                self.c,
                unknowns.as_ptr(),
                unknowns.len(),
                knowns.as_ptr(),
                knowns.len(),
                seed.as_ptr(),
                sensitivity.as_mut_ptr(),
            )
        }
    }

    pub fn event_indicators(&self) -> (Status, Vec<f64>) {
        let mut z = vec![0.0; self.fmu.md.number_of_event_indicators];
        let s = unsafe { (self.fmu.api.get_event_indicators)(self.c, z.as_mut_ptr(), z.len()) };
        (s, z)
    }

    pub fn enter_event_mode(&self) -> Status {
        unsafe { (self.fmu.api.enter_event_mode)(self.c) }
    }

    pub fn new_discrete_states(&self) -> (Status, EventInfo) {
        let mut info = EventInfo::default();
        let s = unsafe { (self.fmu.api.new_discrete_states)(self.c, &mut info) };
        (s, info)
    }

    pub fn enter_continuous_time_mode(&self) -> Status {
        unsafe { (self.fmu.api.enter_continuous_time_mode)(self.c) }
    }

    pub fn completed_integrator_step(&self) -> (Status, c_int, c_int) {
        let (mut event, mut stop) = (-1, -1);
        let s =
            unsafe { (self.fmu.api.completed_integrator_step)(self.c, 1, &mut event, &mut stop) };
        (s, event, stop)
    }

    /// The event iteration an importer runs in Event Mode: fmi2NewDiscreteStates until no new
    /// discrete states are needed; whether any update reset the continuous states.
    pub fn event_iteration(&self) -> (Status, bool) {
        let mut reset = false;
        for _ in 0..1000 {
            let (s, info) = self.new_discrete_states();
            if s != OK {
                return (s, reset);
            }
            reset |= info.values_of_continuous_states_changed != 0;
            if info.new_discrete_states_needed == 0 {
                return (OK, reset);
            }
        }
        panic!("the event iteration never ends");
    }

    pub fn do_step(&self, t: f64, h: f64) -> Status {
        unsafe { (self.api().do_step)(self.c, t, h, 1) }
    }

    pub fn terminate(&self) -> Status {
        unsafe { (self.api().terminate)(self.c) }
    }

    pub fn reset(&self) -> Status {
        unsafe { (self.api().reset)(self.c) }
    }

    pub fn get_state(&self) -> (Status, FmuState) {
        let mut s: *mut c_void = std::ptr::null_mut();
        let status = unsafe { (self.api().get_fmu_state)(self.c, &mut s) };
        (status, FmuState(s))
    }

    pub fn set_state(&self, s: &FmuState) -> Status {
        unsafe { (self.api().set_fmu_state)(self.c, s.0) }
    }

    /// The time derivative of the Real `name` at the communication point `t`, with the inputs
    /// held: a second-order forward difference over steps of `delta` and `2 delta`, each taken
    /// from a saved FMU state, which is restored afterwards. Derived outputs (accelerations)
    /// are checked against it.
    pub fn time_derivative(&self, name: &str, t: f64, delta: f64) -> f64 {
        let (status, saved) = self.get_state();
        assert_eq!(status, OK);
        let x0 = self.real(name);
        let mut after = [0.0; 2];
        for (i, h) in [delta, 2.0 * delta].into_iter().enumerate() {
            assert_eq!(self.do_step(t, h), OK, "{}", self.log_text());
            after[i] = self.real(name);
            assert_eq!(self.set_state(&saved), OK);
        }
        assert_eq!(self.free_state(saved), OK);
        (-3.0 * x0 + 4.0 * after[0] - after[1]) / (2.0 * delta)
    }

    pub fn free_state(&self, mut s: FmuState) -> Status {
        let status = unsafe { (self.api().free_fmu_state)(self.c, &mut s.0) };
        assert!(s.0.is_null(), "fmi2FreeFMUstate must reset the pointer");
        status
    }

    pub fn serialize(&self, s: &FmuState) -> Result<Vec<u8>, Status> {
        let mut size = 0usize;
        let status = unsafe { (self.api().serialized_fmu_state_size)(self.c, s.0, &mut size) };
        if status != OK {
            return Err(status);
        }
        let mut bytes = vec![0u8; size];
        let status = unsafe {
            (self.api().serialize_fmu_state)(self.c, s.0, bytes.as_mut_ptr() as *mut c_char, size)
        };
        if status != OK {
            return Err(status);
        }
        Ok(bytes)
    }

    pub fn deserialize(&self, bytes: &[u8]) -> (Status, FmuState) {
        let mut s: *mut c_void = std::ptr::null_mut();
        let status = unsafe {
            (self.api().deserialize_fmu_state)(
                self.c,
                bytes.as_ptr() as *const c_char,
                bytes.len(),
                &mut s,
            )
        };
        (status, FmuState(s))
    }
}

impl Drop for Instance<'_> {
    fn drop(&mut self) {
        unsafe { (self.fmu.api.free_instance)(self.c) }
    }
}
