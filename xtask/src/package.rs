//! `cargo xtask package`: one `.fmu` per component crate under `fmu/`.
//!
//! modelDescription.xml and documentation/index.html are produced by the built binary itself
//! (its `drivetrain_fmu_model_description` and `drivetrain_fmu_documentation` exports), from the same variable table that serves get/set.
//! The xtask adds the default reference scenario of `reference-fmus/<Model>/` in the FMI-LS-REF
//! layout (`extra/org.fmi-standard.fmi-ls-ref/`) and its plot to the documentation
//! (`reference.rs`, `svg.rs`).

use crate::components::components;
use crate::darwin;
use crate::{platforms, reference, root};
use model_description::ModelDescription;
use std::ffi::{c_char, CStr, CString};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `xs:dateTime` in UTC; `SOURCE_DATE_EPOCH` makes packages reproducible.
fn timestamp() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0)
        });
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// What the binary describes of itself.
#[derive(Clone, Copy, Debug)]
enum Text {
    ModelDescription,
    ModelDescription3,
    Documentation,
}

/// Calls the binary's `drivetrain_fmu_model_description(timestamp)` or
/// `drivetrain_fmu_documentation()`.
fn describe(so: &Path, what: Text, stamp: &str) -> Result<String, String> {
    type Description = unsafe extern "C" fn(*const c_char) -> *mut c_char;
    type Documentation = unsafe extern "C" fn() -> *mut c_char;
    type Free = unsafe extern "C" fn(*mut c_char);
    let stamp = CString::new(stamp).expect("no NUL in a timestamp");
    unsafe {
        let lib = libloading::Library::new(so).map_err(|e| format!("{}: {e}", so.display()))?;
        let free: libloading::Symbol<Free> = lib
            .get(b"drivetrain_fmu_free_string")
            .map_err(|e| e.to_string())?;
        let p = match what {
            Text::ModelDescription => lib
                .get::<Description>(b"drivetrain_fmu_model_description")
                .map_err(|e| e.to_string())?(stamp.as_ptr()),
            Text::ModelDescription3 => lib
                .get::<Description>(b"drivetrain_fmu_model_description3")
                .map_err(|e| e.to_string())?(stamp.as_ptr()),
            Text::Documentation => lib
                .get::<Documentation>(b"drivetrain_fmu_documentation")
                .map_err(|e| e.to_string())?(),
        };
        if p.is_null() {
            return Err(format!("{}: {what:?} failed", so.display()));
        }
        let text = CStr::from_ptr(p).to_string_lossy().into_owned();
        free(p);
        Ok(text)
    }
}

fn write_fmu(path: &Path, files: &[(&str, &[u8])]) -> Result<(), String> {
    let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in files {
        // Zip paths use forward slashes, whatever the host.
        zip.start_file(name.replace('\\', "/"), options)
            .map_err(|e| e.to_string())?;
        zip.write_all(bytes).map_err(|e| e.to_string())?;
    }
    zip.finish().map_err(|e| e.to_string())?;
    Ok(())
}

/// Which binaries a package carries.
#[derive(Clone, Copy, PartialEq)]
pub enum Platforms {
    /// linux64 (glibc 2.17 floor), win64 and darwin64 (universal: x86_64 and arm64, macOS 11),
    /// and for FMI 3.0 also aarch64-linux (glibc 2.17 floor): what users get.
    All,
    /// Only the linux64 binary: quick local iteration.
    HostOnly,
}

/// A platform the FMUs carry a binary for.
#[derive(Clone, Copy, Debug)]
pub enum Platform {
    /// linux64 (glibc 2.17 floor), or with `Platforms::HostOnly` the native build.
    Linux,
    Windows,
    Aarch64,
    /// x86_64 and arm64 macOS, with their universal binary.
    Darwin,
}

/// The component crates to package: every one, or the one whose model is `only`.
fn selected(only: Option<&str>) -> Result<Vec<crate::components::Component>, String> {
    let mut components = components()?;
    if let Some(model) = only {
        components.retain(|c| c.model == model);
        if components.is_empty() {
            return Err(format!("package: no component packages {model}"));
        }
    }
    Ok(components)
}

/// Builds the binaries of every component (or of `only`'s) for `platform`; returns the
/// directory that holds them.
pub fn build(
    platforms: Platforms,
    platform: Platform,
    only: Option<&str>,
) -> Result<PathBuf, String> {
    let components = selected(only)?;
    let crates: Vec<&str> = components.iter().map(|c| c.crate_name.as_str()).collect();
    match (platforms, platform) {
        (_, Platform::Linux) => platforms::build_linux(&crates, &crate::venv_bin()?),
        (Platforms::HostOnly, _) => Err(format!("{platform:?}: not built with --host-only")),
        (Platforms::All, Platform::Windows) => platforms::build_windows(&crates),
        (Platforms::All, Platform::Aarch64) => {
            platforms::build_aarch64(&crates, &crate::venv_bin()?)
        }
        (Platforms::All, Platform::Darwin) => crate::darwin::build(&crates, &crate::venv_bin()?),
    }
}

/// Builds every component (or only the one whose model is `only`) and writes its `.fmu`;
/// returns their paths.
pub fn package(platforms: Platforms, only: Option<&str>) -> Result<Vec<PathBuf>, String> {
    package_into(platforms, only, "target/fmu")
}

/// [`package`] into `dir` (relative to the workspace), with `fmi3/` under it.
pub fn package_into(
    platforms: Platforms,
    only: Option<&str>,
    dir: &str,
) -> Result<Vec<PathBuf>, String> {
    build(platforms, Platform::Linux, only)?;
    if platforms == Platforms::All {
        build(platforms, Platform::Windows, only)?;
        build(platforms, Platform::Aarch64, only)?;
        build(platforms, Platform::Darwin, only)?;
    }
    write_into(platforms, only, dir)
}

/// Writes the `.fmu` of every component (or of `only`'s), FMI 2.0 and FMI 3.0, from the
/// binaries `build` left; returns the FMI 2.0 paths.
pub fn write(platforms: Platforms, only: Option<&str>) -> Result<Vec<PathBuf>, String> {
    write_into(platforms, only, "target/fmu")
}

/// [`write`] into `dir` (relative to the workspace).
fn write_into(platforms: Platforms, only: Option<&str>, dir: &str) -> Result<Vec<PathBuf>, String> {
    let root = root();
    let components = selected(only)?;
    let (linux_dir, windows_dir, aarch64_dir) = match platforms {
        Platforms::HostOnly => (platforms::linux_dir(), None, None),
        Platforms::All => (
            platforms::linux_dir(),
            Some(platforms::windows_dir()),
            Some(platforms::aarch64_dir()),
        ),
    };

    let out_dir = root.join(dir);
    let out_dir3 = out_dir.join("fmi3");
    std::fs::create_dir_all(&out_dir3).map_err(|e| e.to_string())?;
    let stamp = timestamp();
    let mut written = Vec::new();
    for c in &components {
        let lib = c.crate_name.replace('-', "_");
        let so = linux_dir.join(format!("lib{lib}.so"));
        let xml = describe(&so, Text::ModelDescription, &stamp)?;
        // Read it back: what we ship must parse with our own reader.
        let md = ModelDescription::from_xml(&xml).map_err(|e| e.to_string())?;
        let id = &md.co_simulation.model_identifier;
        if *id != c.model {
            return Err(format!(
                "fmu/{}: the binary describes {id}, its Cargo.toml says {}",
                c.crate_name, c.model
            ));
        }
        let scenarios = reference::Scenario::read_all(&root.join("reference-fmus").join(id), id)?;
        let others: Vec<&str> = scenarios[1..].iter().map(|s| s.name.as_str()).collect();
        let doc = reference::insert_section(
            &describe(&so, Text::Documentation, &stamp)?,
            &scenarios[0].documentation(&md, &others)?,
        )?;
        let extra = reference::fmu_files(&scenarios);
        let read = |p: &Path| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
        let linux = read(&so)?;
        let windows = match &windows_dir {
            Some(dir) => Some(read(&dir.join(format!("{lib}.dll")))?),
            None => None,
        };
        let (so_name, dll_name, dylib_name) = (
            format!("binaries/linux64/{id}.so"),
            format!("binaries/win64/{id}.dll"),
            format!("binaries/darwin64/{id}.dylib"),
        );
        // macOS: the universal binary for FMI 2.0, the thin ones for FMI 3.0.
        let darwin = match platforms {
            Platforms::All => {
                let [x86_64, arm64] = darwin::TARGETS.map(|t| read(&darwin::thin(t, &lib)));
                Some((read(&darwin::universal(&lib))?, [x86_64?, arm64?]))
            }
            Platforms::HostOnly => None,
        };
        let mut files: Vec<(&str, &[u8])> = vec![
            ("modelDescription.xml", xml.as_bytes()),
            (&so_name, &linux),
            ("documentation/index.html", doc.as_bytes()),
        ];
        if let Some(dll) = &windows {
            files.push((&dll_name, dll));
        }
        if let Some((universal, _)) = &darwin {
            files.push((&dylib_name, universal));
        }
        files.extend(
            extra
                .iter()
                .map(|(name, bytes)| (name.as_str(), bytes.as_slice())),
        );
        let path = out_dir.join(format!("{id}.fmu"));
        write_fmu(&path, &files)?;
        eprintln!("xtask: wrote {}", path.display());
        written.push(path);

        // FMI 3.0: the same binaries (they export both APIs) under FMI 3.0's platform names,
        // the FMI 3.0 description, the same documentation and reference.
        let xml3 = describe(&so, Text::ModelDescription3, &stamp)?;
        let aarch64 = match &aarch64_dir {
            Some(dir) => Some(read(&dir.join(format!("lib{lib}.so")))?),
            None => None,
        };
        let names3 = [
            format!("binaries/x86_64-linux/{id}.so"),
            format!("binaries/x86_64-windows/{id}.dll"),
            format!("binaries/aarch64-linux/{id}.so"),
            format!("binaries/x86_64-darwin/{id}.dylib"),
            format!("binaries/aarch64-darwin/{id}.dylib"),
        ];
        let mut files3: Vec<(&str, &[u8])> = vec![
            ("modelDescription.xml", xml3.as_bytes()),
            (&names3[0], &linux),
            ("documentation/index.html", doc.as_bytes()),
        ];
        if let Some(dll) = &windows {
            files3.push((&names3[1], dll));
        }
        if let Some(so) = &aarch64 {
            files3.push((&names3[2], so));
        }
        if let Some((_, [x86_64, arm64])) = &darwin {
            files3.push((&names3[3], x86_64));
            files3.push((&names3[4], arm64));
        }
        files3.extend(
            extra
                .iter()
                .map(|(name, bytes)| (name.as_str(), bytes.as_slice())),
        );
        let path3 = out_dir3.join(format!("{id}.fmu"));
        write_fmu(&path3, &files3)?;
        eprintln!("xtask: wrote {}", path3.display());
    }
    Ok(written)
}
