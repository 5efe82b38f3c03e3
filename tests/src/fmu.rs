//! A loaded FMU: unpacked from its .fmu (or a model built into the process), its model description
//! read and its binary's functions resolved.

use super::*;

pub(crate) static UNPACKED: AtomicUsize = AtomicUsize::new(0);

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
        Fmu::load_fresh(model).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Fmu::load`], an error where it would panic.
    pub fn load_fresh(model: &str) -> Result<Fmu, String> {
        let path = fmu_dir().join(format!("{model}.fmu"));
        check_fresh(&path, &fmu_sources())?;
        Fmu::load_path(&path).map_err(|e| format!("{}: {e}", path.display()))
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
