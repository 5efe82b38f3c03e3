//! macOS binaries, cross-built here with no Mac and no SDK: `x86_64-apple-darwin` and
//! `aarch64-apple-darwin` by the rustup toolchain with its prebuilt std, linked by its
//! `rust-lld` as ld64 against zig's `libSystem.tbd` (PyPI's ziglang, in `.venv`), in a
//! directory laid out as an SDK (`SDKROOT`: rustc passes it to the linker as `-syslibroot`).
//!
//! - FMI 2.0 `darwin64`: one universal binary holding both (`llvm-lipo`, Debian's `llvm`);
//!   FMI 3.0 `x86_64-darwin` and `aarch64-darwin`: each thin binary.
//! - Minimum macOS 11.0 (`MACOSX_DEPLOYMENT_TARGET`): the first with Apple Silicon, so both
//!   architectures share it; every Mac Apple still updates meets it.
//! - ld64 honours the exported-symbols list rustc writes (zig's Mach-O linker ignores it and
//!   exports every symbol of std and the dependencies): the same exports as the Linux `.so`.
//! - The install name is `@rpath/lib<crate>.dylib` (`-Zosx-rpath-install-name`, no `LC_RPATH`),
//!   not the build machine's path; rust-lld signs the arm64 binary ad hoc, as macOS requires.
//! - The same maths as on Linux: Mach-O has no `--wrap`, so `-alias` binds the binary's own
//!   calls of `pow` and `cbrt` to the runtime's (libm's); nothing takes them from libSystem.
//! - zig's stub names `arm64e`, not `arm64`, which ld64.lld takes literally: the build uses a
//!   copy naming both ([`arm64_stub`]). The libc crate names `libiconv` but nothing calls it:
//!   its stub is empty and `-dead_strip_dylibs` drops it.

use crate::{build_dir, root, run};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The two Rust targets, in the order `lipo` puts them.
pub const TARGETS: [&str; 2] = ["x86_64-apple-darwin", "aarch64-apple-darwin"];
/// The oldest macOS the binaries load on.
pub const MINIMUM_MACOS: &str = "11.0";
/// Debian's LLVM tools: `llvm-lipo` builds the universal binary; the checks read Mach-O with
/// `llvm-objdump` and `llvm-nm`.
pub const LLVM_PACKAGES: &[&str] = &["llvm"];

/// An LLVM tool: on the PATH, or else in the newest `/usr/lib/llvm-*/bin` (Debian's `llvm`
/// package links only some of its tools into /usr/bin; `llvm-lipo` is not among them).
pub fn llvm_tool(name: &str) -> Option<PathBuf> {
    let works = |p: &Path| crate::platforms::has(&p.to_string_lossy(), "--version");
    if works(Path::new(name)) {
        return Some(PathBuf::from(name));
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib")
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("llvm-"))
        .map(|e| e.path().join("bin").join(name))
        .filter(|p| works(p))
        .collect();
    found.sort_by_key(|p| {
        let version = p
            .parent()?
            .parent()?
            .file_name()?
            .to_string_lossy()
            .into_owned();
        version.trim_start_matches("llvm-").parse::<u32>().ok()
    });
    found.pop()
}

/// Where the darwin builds go.
fn target_dir() -> PathBuf {
    build_dir().join("darwin")
}

/// Where the thin binary of `target` for `crate_lib` (`lib<crate>.dylib`) is.
pub fn thin(target: &str, lib: &str) -> PathBuf {
    target_dir()
        .join(target)
        .join("release")
        .join(format!("lib{lib}.dylib"))
}

/// Where the universal binaries are.
fn universal_dir() -> PathBuf {
    target_dir().join("universal")
}

/// Where the universal binary for `lib` is.
pub fn universal(lib: &str) -> PathBuf {
    universal_dir().join(format!("lib{lib}.dylib"))
}

/// Builds the crates' dylibs for both targets and their universal binaries; returns the
/// directory of the darwin builds.
pub fn build(crates: &[&str], venv_bin: &Path) -> Result<PathBuf, String> {
    for target in TARGETS {
        if !crate::platforms::rustup_std(target) {
            return Err(format!(
                "the macOS build needs rustup's std for {target} (`rustup target add {target}`), \
                 and rustup could not download it"
            ));
        }
    }
    if llvm_tool("llvm-lipo").is_none() {
        crate::platforms::apt_install(LLVM_PACKAGES, "the macOS universal binaries")?;
    }
    let lipo = llvm_tool("llvm-lipo").ok_or("llvm-lipo: not found after installing llvm")?;
    let sdk = system_stubs(venv_bin)?;
    let mut cargo = Command::new(env!("CARGO"));
    cargo.args(["build", "--release", "--locked"]);
    for target in TARGETS {
        cargo
            .args(["--target", target])
            .arg("--config")
            .arg(format!("target.{target}.rustflags = {:?}", link_flags()));
    }
    cargo
        .env("CARGO_TARGET_DIR", target_dir())
        .env("MACOSX_DEPLOYMENT_TARGET", MINIMUM_MACOS)
        .env("SDKROOT", &sdk)
        // -Zosx-rpath-install-name is unstable; the stable compiler takes it with this.
        .env("RUSTC_BOOTSTRAP", "1")
        .env_remove("RUSTFLAGS")
        .current_dir(root());
    for c in crates {
        cargo.args(["-p", c]);
    }
    run(&mut cargo)?;
    let out = universal_dir();
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    for c in crates {
        let lib = c.replace('-', "_");
        run(Command::new(&lipo)
            .arg("-create")
            .args(TARGETS.map(|t| thin(t, &lib)))
            .arg("-output")
            .arg(universal(&lib)))?;
    }
    Ok(target_dir())
}

/// rustc's flags for a darwin target: rust-lld as ld64.
fn link_flags() -> Vec<String> {
    let mut flags: Vec<String> = [
        "-Clinker=rust-lld",
        "-Clinker-flavor=ld64.lld",
        "-Zosx-rpath-install-name",
    ]
    .map(String::from)
    .to_vec();
    let link = [
        "-dead_strip_dylibs",
        "-alias",
        "___wrap_pow",
        "_pow",
        "-alias",
        "___wrap_cbrt",
        "_cbrt",
    ];
    flags.extend(link.iter().map(|a| format!("-Clink-arg={a}")));
    flags
}

/// The SDK the link sees: in its `usr/lib`, the stubs of the system libraries the link names:
/// libSystem (with `libc` and `libm`, which are libSystem on macOS) from zig's, and an empty
/// `libiconv`. Returns its root.
fn system_stubs(venv_bin: &Path) -> Result<PathBuf, String> {
    let zig = zig_libsystem(venv_bin)?;
    let text = std::fs::read_to_string(&zig).map_err(|e| format!("{}: {e}", zig.display()))?;
    let sdk = target_dir().join("sdk");
    let dir = sdk.join("usr/lib");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let system = arm64_stub(&text);
    let empty = |install: &str| {
        format!(
            "--- !tapi-tbd\ntbd-version: 4\ntargets: [ x86_64-macos, arm64-macos ]\n\
             install-name: '{install}'\n...\n"
        )
    };
    let files = [
        ("libSystem.tbd", system.clone()),
        ("libc.tbd", system.clone()),
        ("libm.tbd", system),
        ("libiconv.tbd", empty("/usr/lib/libiconv.2.dylib")),
    ];
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(sdk)
}

/// zig's `libc/darwin/libSystem.tbd` in the venv's ziglang.
fn zig_libsystem(venv_bin: &Path) -> Result<PathBuf, String> {
    let lib = venv_bin.parent().unwrap_or(venv_bin).join("lib");
    let found = std::fs::read_dir(&lib)
        .map_err(|e| format!("{}: {e}", lib.display()))?
        .filter_map(Result::ok)
        .map(|e| {
            e.path()
                .join("site-packages/ziglang/lib/libc/darwin/libSystem.tbd")
        })
        .find(|p| p.exists());
    found.ok_or_else(|| format!("no ziglang libSystem.tbd under {}", lib.display()))
}

/// A TAPI stub's target lists with `arm64-macos` beside `arm64e-macos`, and only the macOS
/// targets ld64.lld knows (`x86_64-macos`, `arm64e-macos`): zig's lists `arm64e`, the arm64
/// of Apple's system libraries, and Mac Catalyst variants.
pub fn arm64_stub(tbd: &str) -> String {
    let is_target = |t: &str| {
        t.split_once('-')
            .is_some_and(|(_, os)| os == "macos" || os == "maccatalyst")
    };
    let mut out = String::with_capacity(tbd.len());
    let mut rest = tbd;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']').map(|c| open + c) else {
            break;
        };
        out.push_str(&rest[..open]);
        let items: Vec<&str> = rest[open + 1..close]
            .split(',')
            .map(str::trim)
            .filter(|i| !i.is_empty())
            .collect();
        if !items.is_empty() && items.iter().all(|i| is_target(i)) {
            let mut kept: Vec<&str> = Vec::new();
            for item in items {
                match item {
                    "x86_64-macos" => kept.push(item),
                    "arm64e-macos" => kept.extend(["arm64-macos", item]),
                    _ => {}
                }
            }
            out.push_str(&format!("[ {} ]", kept.join(", ")));
        } else {
            out.push_str(&rest[open..=close]);
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stub_names_arm64_and_keeps_the_symbols() {
        let zig = "targets: [ x86_64-macos, x86_64-maccatalyst, arm64e-macos, \n   \
                   arm64e.x1-macos ]\nexports:\n  - targets: [ arm64e-macos ]\n    symbols: [ _a, \
                   _b ]\n";
        let fixed = arm64_stub(zig);
        assert_eq!(
            fixed,
            "targets: [ x86_64-macos, arm64-macos, arm64e-macos ]\nexports:\n  - targets: \
             [ arm64-macos, arm64e-macos ]\n    symbols: [ _a, _b ]\n"
        );
    }
}
