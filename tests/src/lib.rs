//! A small FMI 2.0 Co-Simulation importer for tests and benchmarks: unpacks a packaged `.fmu`,
//! reads its modelDescription.xml, loads the binary with libloading and calls it through the
//! C ABI only.

pub mod fmi3;
pub mod implicit;
pub mod importer;
pub mod ode;
pub mod scenario;
pub mod sequence;
pub mod state_bytes;
pub mod structure;

use libloading::Library;
use model_description::ModelDescription;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use fmi_abi::fmi2::{CallbackFunctions, Component, ValueReference as Vr};
pub use fmi_abi::fmi2::{
    EventInfo, Status, CO_SIMULATION, DISCARD, ERROR, FATAL, MODEL_EXCHANGE, OK, WARNING,
};

/// The logger as our FMUs call it: format "%s" and the message as the only variadic argument.
/// Defining a variadic function needs an unstable feature; on the SysV x86-64 and AArch64
/// Linux ABIs the first variadic pointer argument arrives exactly like a sixth fixed one, so
/// this function is handed to the FMU as the variadic `fmi2CallbackLogger`.
type FixedLogger = unsafe extern "C" fn(
    *mut c_void,
    *const c_char,
    Status,
    *const c_char,
    *const c_char,
    *const c_char,
);

/// A table of function pointers, named `$table`, from an FMI function list
/// ([`fmi_abi::fmi2_functions!`], [`fmi_abi::fmi3_functions!`]), resolved from the binary.
macro_rules! api {
    (($table:ident) $($symbol:ident $name:ident ($($arg:ident : $ty:ty),*) -> $ret:ty;)*) => {
        /// Every function of the list, resolved from the binary.
        #[allow(clippy::type_complexity)]
        pub struct $table { $(pub $name: unsafe extern "C" fn($($ty),*) -> $ret,)* }
        impl $table {
            unsafe fn load(lib: &Library) -> Result<$table, String> {
                Ok($table { $($name: *lib
                    .get::<unsafe extern "C" fn($($ty),*) -> $ret>(stringify!($symbol).as_bytes())
                    .map_err(|e| format!("{}: {e}", stringify!($symbol)))?,)* })
            }
        }
    };
}
pub(crate) use api;

fmi_abi::fmi2_functions!(api, Api);

/// Where `cargo xtask package` writes the FMUs.
pub fn fmu_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/fmu")
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A component crate under `fmu/`: it builds a cdylib, and its Cargo.toml names the model
/// identifier of its FMU (`[package.metadata.fmu] model = "..."`).
pub struct ComponentCrate {
    pub crate_name: String,
    pub model: String,
}

/// The models the suite's every-FMU tests run: every component's, or only those named in
/// `FMU_MODELS` (comma-separated), which `cargo xtask mutants` sets for a mutant that reaches
/// only those FMUs.
pub fn models_under_test() -> Vec<String> {
    let models = components().unwrap_or_else(|e| panic!("{e}"));
    assert!(!models.is_empty(), "no component crate under fmu/");
    let only = std::env::var("FMU_MODELS").unwrap_or_default();
    models
        .into_iter()
        .map(|c| c.model)
        .filter(|m| only.is_empty() || only.split(',').any(|o| o == m))
        .collect()
}

/// Whether `FMU_MODELS` narrows the every-FMU tests to some models.
pub fn narrowed() -> bool {
    models_under_test().len() < components().map_or(0, |c| c.len())
}

/// Every component crate, by directory name.
pub fn components() -> Result<Vec<ComponentCrate>, String> {
    let dir = workspace().join("fmu");
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .collect();
    entries.sort_by_key(|e| e.file_name());
    let mut found = Vec::new();
    for entry in entries {
        let Ok(manifest) = std::fs::read_to_string(entry.path().join("Cargo.toml")) else {
            continue;
        };
        if !manifest.contains("\"cdylib\"") {
            continue;
        }
        let value = |key: &str| {
            manifest.lines().find_map(|l| {
                let v = l.trim().strip_prefix(key)?.trim_start().strip_prefix('=')?;
                Some(v.trim().strip_prefix('"')?.strip_suffix('"')?.to_string())
            })
        };
        let missing = |what: &str| format!("no {what} in {}", entry.path().display());
        found.push(ComponentCrate {
            crate_name: value("name").ok_or_else(|| missing("package name"))?,
            model: value("model").ok_or_else(|| missing("[package.metadata.fmu] model"))?,
        });
    }
    Ok(found)
}

/// The newest modification time of any file under `dirs` (recursively).
fn newest_file(dirs: &[PathBuf]) -> std::time::SystemTime {
    let mut newest = std::time::SystemTime::UNIX_EPOCH;
    let mut stack = dirs.to_vec();
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                stack.extend(entries.filter_map(|e| Some(e.ok()?.path())));
            }
        } else if let Ok(modified) = meta.modified() {
            newest = newest.max(modified);
        }
    }
    newest
}

/// An error unless `fmu` exists and is newer than every file under `sources`.
pub fn check_fresh(fmu: &Path, sources: &[PathBuf]) -> Result<(), String> {
    let packaged = std::fs::metadata(fmu)
        .and_then(|m| m.modified())
        .map_err(|e| format!("{}: {e} (run `cargo xtask package`)", fmu.display()))?;
    if packaged < newest_file(sources) {
        return Err(format!(
            "{} is older than its sources (run `cargo xtask package`)",
            fmu.display()
        ));
    }
    Ok(())
}

/// What every FMU is built from: a change anywhere here makes the packaged FMUs stale.
pub(crate) fn fmu_sources() -> Vec<PathBuf> {
    let root = workspace();
    ["fmu", "modelDescription", "Cargo.toml", "Cargo.lock"]
        .iter()
        .map(|p| root.join(p))
        .collect()
}

static UNPACKED: AtomicUsize = AtomicUsize::new(0);

/// A loaded FMU: its model description and its binary.
pub struct Fmu {
    pub md: ModelDescription,
    pub api: Api,
    /// The loaded binary; `None` for a model linked into the program ([`Fmu::in_process`]).
    lib: Option<Library>,
    dir: PathBuf,
}

impl Fmu {
    /// Loads `target/fmu/<model>.fmu`; panics if it is missing or older than its sources.
    pub fn load(model: &str) -> Fmu {
        let path = fmu_dir().join(format!("{model}.fmu"));
        check_fresh(&path, &fmu_sources()).unwrap_or_else(|e| panic!("{e}"));
        Fmu::load_path(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The FMU of every component crate under `fmu/`: a missing or stale one is a failure,
    /// never a test that passes on nothing.
    pub fn all() -> Vec<Fmu> {
        models_under_test().iter().map(|m| Fmu::load(m)).collect()
    }

    pub fn load_path(path: &Path) -> Result<Fmu, String> {
        let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
        let mut zip = zip::ZipArchive::new(file).map_err(|e| e.to_string())?;
        let dir = std::env::temp_dir().join(format!(
            "fmu-harness-{}-{}",
            std::process::id(),
            UNPACKED.fetch_add(1, Ordering::SeqCst)
        ));
        zip.extract(&dir).map_err(|e| e.to_string())?;
        let mut xml = String::new();
        std::fs::File::open(dir.join("modelDescription.xml"))
            .and_then(|mut f| f.read_to_string(&mut xml))
            .map_err(|e| e.to_string())?;
        let md = ModelDescription::from_xml(&xml).map_err(|e| e.to_string())?;
        let id = &md.co_simulation.model_identifier;
        let so = dir.join("binaries/linux64").join(format!("{id}.so"));
        unsafe {
            let lib = Library::new(&so).map_err(|e| format!("{}: {e}", so.display()))?;
            let api = Api::load(&lib)?;
            Ok(Fmu {
                md,
                api,
                lib: Some(lib),
                dir,
            })
        }
    }

    /// A model linked into this program: its description and a table of its functions (the
    /// fuzzer's, `fuzz/`). Its resource location is `fmu-in-process/resources/` in the temporary
    /// directory, empty and shared by every in-process model and process: the fuzzer holds its
    /// models until it exits, so a directory of each one's own would outlive it.
    pub fn in_process(md: ModelDescription, api: Api) -> Fmu {
        let dir = in_process_dir();
        let _ = std::fs::create_dir_all(dir.join("resources"));
        Fmu {
            md,
            api,
            lib: None,
            dir,
        }
    }

    /// Where the FMU is unpacked.
    pub fn unpacked(&self) -> &Path {
        &self.dir
    }

    /// The value reference of the variable called `name`.
    pub fn vr(&self, name: &str) -> Vr {
        self.md
            .variable(name)
            .unwrap_or_else(|| panic!("{} has no variable '{name}'", self.md.model_name))
            .value_reference
    }

    /// Sets Real parameters, enters and exits initialization, and returns the log of the
    /// fmi2ExitInitializationMode that must fail (panics if it succeeds).
    pub fn init_error(&self, params: &[(&str, f64)]) -> String {
        let inst = self.instantiate("init_error");
        for (name, value) in params {
            assert_eq!(inst.set(name, *value), OK, "{name}: {}", inst.log_text());
        }
        assert_eq!(inst.enter_initialization_mode(), OK);
        assert_eq!(
            inst.exit_initialization_mode(),
            ERROR,
            "{params:?} was accepted"
        );
        inst.log_text()
    }

    /// The directory the FMU was unpacked into, as a file URI.
    pub fn resource_uri(&self) -> String {
        format!("file://{}/resources", self.dir.display())
    }

    /// A Co-Simulation instance with logging on, the right GUID and a logger that records.
    pub fn instantiate(&self, name: &str) -> Instance<'_> {
        self.instantiate_with(
            name,
            &self.md.guid.clone(),
            CO_SIMULATION,
            Some(&self.resource_uri()),
        )
        .unwrap_or_else(|log| panic!("fmi2Instantiate returned NULL: {log}"))
    }

    /// A Model Exchange instance, otherwise as [`Fmu::instantiate`].
    pub fn instantiate_me(&self, name: &str) -> Instance<'_> {
        self.instantiate_with(
            name,
            &self.md.guid.clone(),
            MODEL_EXCHANGE,
            Some(&self.resource_uri()),
        )
        .unwrap_or_else(|log| panic!("fmi2Instantiate returned NULL: {log}"))
    }

    /// The number of continuous states (the Derivatives of the ModelStructure).
    pub fn states(&self) -> usize {
        self.md.model_structure.derivatives.len()
    }

    /// fmi2Instantiate with a chosen GUID, fmuType and resource location (`None`: NULL);
    /// the log when it returns NULL.
    pub fn instantiate_with(
        &self,
        name: &str,
        guid: &str,
        fmu_type: c_int,
        resources: Option<&str>,
    ) -> Result<Instance<'_>, String> {
        let log = Box::new(Mutex::new(Vec::new()));
        let callbacks = Box::new(CallbackFunctions {
            // The fixed-argument logger as the variadic one (see FixedLogger).
            logger: Some(unsafe {
                std::mem::transmute::<FixedLogger, fmi_abi::fmi2::Logger>(record_log)
            }),
            allocate_memory: None,
            free_memory: None,
            step_finished: None,
            component_environment: &*log as *const Mutex<Vec<LogLine>> as *mut c_void,
        });
        let name_c = CString::new(name).unwrap();
        let guid_c = CString::new(guid).unwrap();
        let uri = resources.map(|r| CString::new(r).unwrap());
        let c = unsafe {
            (self.api.instantiate)(
                name_c.as_ptr(),
                fmu_type,
                guid_c.as_ptr(),
                uri.as_ref().map_or(std::ptr::null(), |u| u.as_ptr()),
                &*callbacks,
                0,
                1,
            )
        };
        let instance = Instance {
            fmu: self,
            c,
            log,
            _callbacks: callbacks,
        };
        if c.is_null() {
            Err(instance.log_text())
        } else {
            Ok(instance)
        }
    }
}

/// The empty directory every in-process model is given as its unpacked FMU (never removed).
pub fn in_process_dir() -> PathBuf {
    std::env::temp_dir().join("fmu-in-process")
}

impl Drop for Fmu {
    fn drop(&mut self) {
        // An unpacked FMU's directory is its own; an in-process model's is shared.
        if self.lib.is_some() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

#[derive(Debug, Clone)]
pub struct LogLine {
    pub status: Status,
    pub category: String,
    pub message: String,
}

unsafe extern "C" fn record_log(
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
    log: Box<Mutex<Vec<LogLine>>>,
    _callbacks: Box<CallbackFunctions>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    #[test]
    fn every_component_crate_names_its_model() {
        let components = components().unwrap();
        let names: Vec<(&str, &str)> = components
            .iter()
            .map(|c| (c.crate_name.as_str(), c.model.as_str()))
            .collect();
        assert!(names.contains(&("gear", "Gear")), "{names:?}");
        assert!(names.contains(&("cvt", "CVT")), "{names:?}");
        // The runtime and the shared variable-ratio physics are libraries, not FMUs.
        assert!(!names.iter().any(|(c, _)| *c == "fmu-runtime"), "{names:?}");
    }

    #[test]
    fn a_missing_or_stale_fmu_is_refused() {
        let dir = std::env::temp_dir().join(format!("fmu-fresh-{}", std::process::id()));
        let src = dir.join("src");
        std::fs::create_dir_all(&src).unwrap();
        let source = src.join("lib.rs");
        std::fs::write(&source, "").unwrap();
        let fmu = dir.join("M.fmu");
        let sources = [src.clone()];
        assert!(check_fresh(&fmu, &sources).unwrap_err().contains("M.fmu"));
        std::fs::write(&fmu, "").unwrap();
        let set = |path: &Path, t: SystemTime| {
            std::fs::File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(t)
                .unwrap()
        };
        let now = SystemTime::now();
        set(&source, now);
        set(&fmu, now - Duration::from_secs(10));
        assert!(check_fresh(&fmu, &sources)
            .unwrap_err()
            .contains("older than its sources"));
        set(&fmu, now + Duration::from_secs(10));
        check_fresh(&fmu, &sources).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
