//! The importer's logger callback and the log categories.

use std::ffi::{c_void, CString};

pub use fmi_abi::fmi2::{CallbackFunctions, Status, DISCARD, ERROR, FATAL, OK, WARNING};

pub type LoggerFn = fmi_abi::fmi2::Logger;

/// The categories declared in modelDescription.xml.
pub const CATEGORIES: [(&str, &str); 4] = [
    (
        "logEvents",
        "Events located inside a step and the resulting mode changes",
    ),
    ("logStatusWarning", "Warnings"),
    (
        "logStatusError",
        "Errors: rejected calls, parameters and inputs",
    ),
    ("logCalls", "Every FMI call, by name"),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    Events = 0,
    Warning = 1,
    Error = 2,
    Calls = 3,
}

impl Category {
    fn name(self) -> &'static str {
        CATEGORIES[self as usize].0
    }
}

/// The importer's callback: FMI 2.0's variadic logger or FMI 3.0's `logMessage`.
#[derive(Clone, Copy)]
enum Sink {
    Fmi2(LoggerFn),
    Fmi3(fmi_abi::fmi3::LogMessage),
}

pub struct Logger {
    callback: Option<Sink>,
    env: *mut c_void,
    instance_name: CString,
    /// Whether `fmi2SetDebugLogging` (or `loggingOn`) switched logging on.
    on: bool,
    enabled: [bool; CATEGORIES.len()],
}

// The environment pointer belongs to the importer, which promises to use the instance from one
// thread at a time; the logger never dereferences it.
unsafe impl Send for Logger {}

impl Logger {
    pub fn new(callback: Option<LoggerFn>, env: *mut c_void, name: &str, on: bool) -> Self {
        let instance_name = CString::new(name.replace('\0', "")).unwrap_or_default();
        // logCalls is a trace of every call: only on request through fmi2SetDebugLogging.
        let mut enabled = [true; CATEGORIES.len()];
        enabled[Category::Calls as usize] = false;
        Logger {
            callback: callback.map(Sink::Fmi2),
            env,
            instance_name,
            on,
            enabled,
        }
    }

    /// A logger on FMI 3.0's `logMessage` callback.
    pub fn fmi3(
        callback: Option<fmi_abi::fmi3::LogMessage>,
        env: *mut c_void,
        name: &str,
        on: bool,
    ) -> Self {
        let mut logger = Logger::new(None, env, name, on);
        logger.callback = callback.map(Sink::Fmi3);
        logger
    }

    /// `fmi2SetDebugLogging`: no categories means all of them.
    pub fn configure(&mut self, on: bool, categories: &[String]) -> Result<(), String> {
        let mut enabled = [categories.is_empty(); CATEGORIES.len()];
        for c in categories {
            match CATEGORIES.iter().position(|(name, _)| name == c) {
                Some(i) => enabled[i] = true,
                None => return Err(format!("unknown log category '{c}'")),
            }
        }
        self.on = on;
        self.enabled = enabled;
        Ok(())
    }

    #[inline(always)]
    pub fn enabled(&self, category: Category) -> bool {
        // Errors are always reported: an importer must learn why a call failed.
        category == Category::Error || (self.on && self.enabled[category as usize])
    }

    /// Sends `message` to the importer if its category is on. Inlined: most calls log
    /// nothing (logCalls is off), and then cost a test.
    #[inline(always)]
    pub fn log(&self, status: Status, category: Category, message: &str) {
        if self.enabled(category) {
            self.send(status, category, message);
        }
    }

    #[inline(never)]
    fn send(&self, status: Status, category: Category, message: &str) {
        let Some(callback) = self.callback else {
            return;
        };
        let category = CString::new(category.name()).unwrap_or_default();
        let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
        match callback {
            // The message is passed as the argument of "%s", so a '%' in it is harmless.
            Sink::Fmi2(callback) => unsafe {
                callback(
                    self.env,
                    self.instance_name.as_ptr(),
                    status,
                    category.as_ptr(),
                    c"%s".as_ptr(),
                    message.as_ptr(),
                )
            },
            // FMI 3.0 passes no instance name: the message starts with it.
            Sink::Fmi3(callback) => {
                let message = CString::new(format!(
                    "{}: {}",
                    self.instance_name.to_string_lossy(),
                    message.to_string_lossy()
                ))
                .unwrap_or_default();
                unsafe { callback(self.env, status, category.as_ptr(), message.as_ptr()) }
            }
        }
    }
}
