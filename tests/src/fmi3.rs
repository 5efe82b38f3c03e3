//! A small FMI 3.0 importer for the tests: loads `target/fmu/fmi3/<Model>.fmu` (its
//! `binaries/x86_64-linux`) and calls it through the C ABI only, with a logger and an
//! intermediate update callback that record what the FMU tells them. Value references are
//! those of the FMI 2.0 FMU (the FMI 3.0 description keeps them), so names are looked up in
//! that FMU's description.

use crate::{check_fresh, fmu_dir, fmu_sources, LogLine, Status, OK};
use fmi_abi::fmi3::ValueReference as Vr;
use libloading::Library;
use model_description::ModelDescription;
use std::ffi::{c_char, c_void, CStr, CString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

fmi_abi::fmi3_functions!(crate::api, Api3);

static UNPACKED: AtomicUsize = AtomicUsize::new(0);

fn unzip(path: &Path) -> Result<PathBuf, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| e.to_string())?;
    let dir = std::env::temp_dir().join(format!(
        "fmu3-harness-{}-{}",
        std::process::id(),
        UNPACKED.fetch_add(1, Ordering::SeqCst)
    ));
    zip.extract(&dir).map_err(|e| e.to_string())?;
    Ok(dir)
}

fn read(path: &Path) -> String {
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_string(&mut text))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text
}

/// A loaded FMI 3.0 FMU.
pub struct Fmu3 {
    /// The FMI 2.0 description of the same model (same names and value references).
    pub md: ModelDescription,
    /// The FMI 3.0 modelDescription.xml as packaged.
    pub xml: String,
    pub api: Api3,
    /// The loaded binary; `None` for a model linked into the program ([`Fmu3::in_process`]).
    lib: Option<Library>,
    dir: PathBuf,
}

impl Fmu3 {
    /// Loads `target/fmu/fmi3/<model>.fmu`; panics if it is missing or stale.
    pub fn load(model: &str) -> Fmu3 {
        let path = fmu_dir().join("fmi3").join(format!("{model}.fmu"));
        check_fresh(&path, &fmu_sources()).unwrap_or_else(|e| panic!("{e}"));
        let fmi2 = unzip(&fmu_dir().join(format!("{model}.fmu"))).unwrap();
        let md = ModelDescription::from_xml(&read(&fmi2.join("modelDescription.xml"))).unwrap();
        let _ = std::fs::remove_dir_all(&fmi2);
        let dir = unzip(&path).unwrap();
        let xml = read(&dir.join("modelDescription.xml"));
        let so = dir.join(format!("binaries/x86_64-linux/{model}.so"));
        unsafe {
            let lib = Library::new(&so).unwrap_or_else(|e| panic!("{}: {e}", so.display()));
            let api = Api3::load(&lib).unwrap_or_else(|e| panic!("{e}"));
            Fmu3 {
                md,
                xml,
                api,
                lib: Some(lib),
                dir,
            }
        }
    }

    /// A model linked into this program: its FMI 2.0 description, its FMI 3.0 one and a table
    /// of its functions (the fuzzer's, `fuzz/`).
    pub fn in_process(md: ModelDescription, xml: String, api: Api3) -> Fmu3 {
        let dir = crate::in_process_dir();
        let _ = std::fs::create_dir_all(&dir);
        Fmu3 {
            md,
            xml,
            api,
            lib: None,
            dir,
        }
    }

    pub fn vr(&self, name: &str) -> Vr {
        self.md
            .variable(name)
            .unwrap_or_else(|| panic!("{} has no variable '{name}'", self.md.model_name))
            .value_reference
    }

    /// A Co-Simulation instance with logging on and the recording callbacks.
    pub fn co_simulation(&self, event_mode: bool, early_return: bool) -> Instance3<'_> {
        self.instantiate(Kind::CoSimulation {
            event_mode,
            early_return,
        })
        .unwrap_or_else(|log| panic!("fmi3InstantiateCoSimulation returned NULL: {log}"))
    }

    pub fn model_exchange(&self) -> Instance3<'_> {
        self.instantiate(Kind::ModelExchange)
            .unwrap_or_else(|log| panic!("fmi3InstantiateModelExchange returned NULL: {log}"))
    }

    pub fn instantiate(&self, kind: Kind) -> Result<Instance3<'_>, String> {
        self.instantiate_with(kind, &self.md.guid.clone())
    }

    /// An instance with a chosen token; the log when it returns NULL.
    pub fn instantiate_with(&self, kind: Kind, token: &str) -> Result<Instance3<'_>, String> {
        self.instantiate_full(kind, token, &[], true)
    }

    /// A Co-Simulation instance that requires the intermediate variables `required`
    /// (`callback`: whether it passes its intermediate update callback); the log when it
    /// returns NULL.
    pub fn with_intermediate(
        &self,
        event_mode: bool,
        early_return: bool,
        required: &[Vr],
        callback: bool,
    ) -> Result<Instance3<'_>, String> {
        let kind = Kind::CoSimulation {
            event_mode,
            early_return,
        };
        self.instantiate_full(kind, &self.md.guid.clone(), required, callback)
    }

    fn instantiate_full(
        &self,
        kind: Kind,
        token: &str,
        required: &[Vr],
        callback: bool,
    ) -> Result<Instance3<'_>, String> {
        let env = Box::new(Env::default());
        let env_ptr = &*env as *const Env as *mut c_void;
        let name = CString::new("fmi3-test").unwrap();
        let token = CString::new(token).unwrap();
        let c = unsafe {
            match kind {
                Kind::ModelExchange => (self.api.instantiate_model_exchange)(
                    name.as_ptr(),
                    token.as_ptr(),
                    std::ptr::null(),
                    false,
                    true,
                    env_ptr,
                    Some(record_log),
                ),
                Kind::CoSimulation {
                    event_mode,
                    early_return,
                } => (self.api.instantiate_co_simulation)(
                    name.as_ptr(),
                    token.as_ptr(),
                    std::ptr::null(),
                    false,
                    true,
                    event_mode,
                    early_return,
                    required.as_ptr(),
                    required.len(),
                    env_ptr,
                    Some(record_log),
                    callback.then_some(record_update as Update3),
                ),
            }
        };
        let instance = Instance3 { fmu: self, c, env };
        if c.is_null() {
            Err(instance.log_text())
        } else {
            Ok(instance)
        }
    }
}

impl Drop for Fmu3 {
    fn drop(&mut self) {
        // As Fmu's: an in-process model's directory is shared.
        if self.lib.is_some() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub enum Kind {
    ModelExchange,
    CoSimulation {
        event_mode: bool,
        early_return: bool,
    },
}

/// One call of the intermediate update callback.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Update {
    pub time: f64,
    pub set_requested: bool,
    pub get_allowed: bool,
    pub step_finished: bool,
    pub can_return_early: bool,
}

/// What the test does inside the intermediate update callback, with the instance's handle.
pub type OnUpdate = Box<dyn FnMut(&Update, *mut c_void)>;

type Update3 = unsafe extern "C" fn(*mut c_void, f64, bool, bool, bool, bool, *mut bool, *mut f64);

/// What the callbacks record, and how the intermediate update answers.
#[derive(Default)]
pub struct Env {
    pub log: Mutex<Vec<LogLine>>,
    pub updates: Mutex<Vec<Update>>,
    /// Ask for an early return at the update with this index (counted over the instance's
    /// life), at this time (`None`: the update's time).
    pub early_at: Mutex<Option<(usize, Option<f64>)>>,
    /// Call fmi3GetFloat64 on the instance from inside the callback; the statuses it got.
    pub reenter: Mutex<Option<(Reenter, *mut c_void)>>,
    pub reentered: Mutex<Vec<Status>>,
    /// Run inside the callback, after the recording, with the instance's handle.
    pub on_update: Mutex<Option<(OnUpdate, *mut c_void)>>,
}

pub type Reenter = unsafe extern "C" fn(*mut c_void, *const Vr, usize, *mut f64, usize) -> Status;

unsafe extern "C" fn record_log(
    env: *mut c_void,
    status: Status,
    category: *const c_char,
    message: *const c_char,
) {
    let text = |p: *const c_char| {
        if p.is_null() {
            String::new()
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    };
    if let Some(env) = (env as *const Env).as_ref() {
        env.log.lock().unwrap().push(LogLine {
            status,
            category: text(category),
            message: text(message),
        });
    }
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn record_update(
    env: *mut c_void,
    time: f64,
    set_requested: bool,
    get_allowed: bool,
    step_finished: bool,
    can_return_early: bool,
    early_return_requested: *mut bool,
    early_return_time: *mut f64,
) {
    let Some(env) = (env as *const Env).as_ref() else {
        return;
    };
    let mut updates = env.updates.lock().unwrap();
    let index = updates.len();
    updates.push(Update {
        time,
        set_requested,
        get_allowed,
        step_finished,
        can_return_early,
    });
    drop(updates);
    if let Some((f, c)) = env.on_update.lock().unwrap().as_mut() {
        f(
            &Update {
                time,
                set_requested,
                get_allowed,
                step_finished,
                can_return_early,
            },
            *c,
        );
    }
    if let Some((f, c)) = *env.reenter.lock().unwrap() {
        let mut v = 0.0;
        let status = f(c, &0, 1, &mut v, 1);
        env.reentered.lock().unwrap().push(status);
    }
    *early_return_requested = false;
    if let Some((at, when)) = *env.early_at.lock().unwrap() {
        if at == index {
            *early_return_requested = true;
            *early_return_time = when.unwrap_or(time);
        }
    }
}

/// What `fmi3DoStep` returned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub status: Status,
    pub event_handling_needed: bool,
    pub terminate: bool,
    pub early_return: bool,
    pub last_successful_time: f64,
}

/// One instance; freed on drop.
pub struct Instance3<'a> {
    pub fmu: &'a Fmu3,
    pub c: *mut c_void,
    pub env: Box<Env>,
}

/// An FMU state owned by the importer.
pub struct State3(pub *mut c_void);

impl Instance3<'_> {
    fn api(&self) -> &Api3 {
        &self.fmu.api
    }

    pub fn log_text(&self) -> String {
        self.env
            .log
            .lock()
            .unwrap()
            .iter()
            .map(|l| format!("[{}] {}\n", l.category, l.message))
            .collect()
    }

    pub fn enter_initialization_mode(
        &self,
        tolerance: Option<f64>,
        start: f64,
        stop: f64,
    ) -> Status {
        unsafe {
            (self.api().enter_initialization_mode)(
                self.c,
                tolerance.is_some(),
                tolerance.unwrap_or(0.0),
                start,
                true,
                stop,
            )
        }
    }

    pub fn exit_initialization_mode(&self) -> Status {
        unsafe { (self.api().exit_initialization_mode)(self.c) }
    }

    pub fn set(&self, name: &str, value: f64) -> Status {
        self.set_vr(self.fmu.vr(name), value)
    }

    /// At every intermediate update where a set is requested, each of `inputs` moved by 1 and
    /// set back: a value changed, so the FMU restarts its integration at every pause, as a
    /// runtime that restarted there whatever was set would (the fault the tests of "nothing
    /// set, the run without intermediate variables" guard against, kept as a test).
    pub fn restart_at_every_pause(&self, inputs: Vec<Vr>) {
        let (get, set) = (self.api().get_float64, self.api().set_float64);
        let on_update = move |u: &Update, c: *mut c_void| {
            if !u.set_requested {
                return;
            }
            let mut v = vec![0.0; inputs.len()];
            let n = inputs.len();
            let moved: Vec<f64> = unsafe {
                assert_eq!(get(c, inputs.as_ptr(), n, v.as_mut_ptr(), n), OK);
                v.iter().map(|x| x + 1.0).collect()
            };
            for values in [&moved, &v] {
                let status = unsafe { set(c, inputs.as_ptr(), n, values.as_ptr(), n) };
                assert_eq!(status, OK, "t = {}", u.time);
            }
        };
        *self.env.on_update.lock().unwrap() = Some((Box::new(on_update), self.c));
    }

    pub fn set_vr(&self, vr: Vr, value: f64) -> Status {
        unsafe { (self.api().set_float64)(self.c, &vr, 1, &value, 1) }
    }

    pub fn set_int(&self, name: &str, value: i32) -> Status {
        let vr = self.fmu.vr(name);
        unsafe { (self.api().set_int32)(self.c, &vr, 1, &value, 1) }
    }

    pub fn get(&self, vrs: &[Vr]) -> (Status, Vec<f64>) {
        let mut v = vec![0.0; vrs.len()];
        let s = unsafe {
            (self.api().get_float64)(self.c, vrs.as_ptr(), vrs.len(), v.as_mut_ptr(), v.len())
        };
        (s, v)
    }

    pub fn real(&self, name: &str) -> f64 {
        let (s, v) = self.get(&[self.fmu.vr(name)]);
        assert_eq!(s, OK, "fmi3GetFloat64({name}): {}", self.log_text());
        v[0]
    }

    /// The independent variable `time`, whose value reference follows the model's.
    pub fn time(&self) -> f64 {
        let (s, v) = self.get(&[self.fmu.md.model_variables.len() as Vr]);
        assert_eq!(s, OK, "fmi3GetFloat64(time): {}", self.log_text());
        v[0]
    }

    pub fn do_step(&self, t: f64, h: f64) -> Step {
        let mut step = Step {
            status: -1,
            event_handling_needed: false,
            terminate: false,
            early_return: false,
            last_successful_time: f64::NAN,
        };
        step.status = unsafe {
            (self.api().do_step)(
                self.c,
                t,
                h,
                true,
                &mut step.event_handling_needed,
                &mut step.terminate,
                &mut step.early_return,
                &mut step.last_successful_time,
            )
        };
        step
    }

    pub fn enter_event_mode(&self) -> Status {
        unsafe { (self.api().enter_event_mode)(self.c) }
    }

    pub fn enter_step_mode(&self) -> Status {
        unsafe { (self.api().enter_step_mode)(self.c) }
    }

    pub fn enter_continuous_time_mode(&self) -> Status {
        unsafe { (self.api().enter_continuous_time_mode)(self.c) }
    }

    /// One fmi3UpdateDiscreteStates: status, discreteStatesNeedUpdate,
    /// valuesOfContinuousStatesChanged, nextEventTime.
    pub fn update_discrete_states(&self) -> (Status, bool, bool, Option<f64>) {
        let (mut need, mut stop, mut nominals, mut values, mut defined, mut next) =
            (false, false, false, false, false, 0.0);
        let s = unsafe {
            (self.api().update_discrete_states)(
                self.c,
                &mut need,
                &mut stop,
                &mut nominals,
                &mut values,
                &mut defined,
                &mut next,
            )
        };
        (s, need, values, defined.then_some(next))
    }

    /// The importer's event iteration: fmi3UpdateDiscreteStates until nothing changes.
    pub fn event_iteration(&self) -> Status {
        for _ in 0..1000 {
            let (s, need, _, _) = self.update_discrete_states();
            if s != OK || !need {
                return s;
            }
        }
        panic!("the event iteration never ends");
    }

    pub fn set_time(&self, t: f64) -> Status {
        unsafe { (self.api().set_time)(self.c, t) }
    }

    pub fn set_continuous_states(&self, x: &[f64]) -> Status {
        unsafe { (self.api().set_continuous_states)(self.c, x.as_ptr(), x.len()) }
    }

    fn array(
        &self,
        n: usize,
        f: unsafe extern "C" fn(*mut c_void, *mut f64, usize) -> Status,
    ) -> (Status, Vec<f64>) {
        let mut v = vec![0.0; n];
        let s = unsafe { f(self.c, v.as_mut_ptr(), n) };
        (s, v)
    }

    pub fn continuous_states(&self) -> (Status, Vec<f64>) {
        self.array(
            self.fmu.md.model_structure.derivatives.len(),
            self.api().get_continuous_states,
        )
    }

    pub fn derivatives(&self) -> (Status, Vec<f64>) {
        self.array(
            self.fmu.md.model_structure.derivatives.len(),
            self.api().get_continuous_state_derivatives,
        )
    }

    pub fn event_indicators(&self) -> (Status, Vec<f64>) {
        self.array(
            self.fmu.md.number_of_event_indicators,
            self.api().get_event_indicators,
        )
    }

    pub fn get_state(&self) -> (Status, State3) {
        let mut s: *mut c_void = std::ptr::null_mut();
        let status = unsafe { (self.api().get_fmu_state)(self.c, &mut s) };
        (status, State3(s))
    }

    pub fn set_state(&self, s: &State3) -> Status {
        unsafe { (self.api().set_fmu_state)(self.c, s.0) }
    }

    pub fn free_state(&self, mut s: State3) -> Status {
        let status = unsafe { (self.api().free_fmu_state)(self.c, &mut s.0) };
        assert!(s.0.is_null(), "fmi3FreeFMUState must reset the pointer");
        status
    }

    pub fn serialize(&self, s: &State3) -> Result<Vec<u8>, Status> {
        let mut size = 0usize;
        let status = unsafe { (self.api().serialized_fmu_state_size)(self.c, s.0, &mut size) };
        if status != OK {
            return Err(status);
        }
        let mut bytes = vec![0u8; size];
        let status =
            unsafe { (self.api().serialize_fmu_state)(self.c, s.0, bytes.as_mut_ptr(), size) };
        if status != OK {
            return Err(status);
        }
        Ok(bytes)
    }

    pub fn deserialize(&self, bytes: &[u8]) -> (Status, State3) {
        let mut s: *mut c_void = std::ptr::null_mut();
        let status = unsafe {
            (self.api().deserialize_fmu_state)(self.c, bytes.as_ptr(), bytes.len(), &mut s)
        };
        (status, State3(s))
    }
}

impl Drop for Instance3<'_> {
    fn drop(&mut self) {
        unsafe { (self.fmu.api.free_instance)(self.c) }
    }
}
