//! The platforms every FMU carries, the toolchains that build them, and the C harness that runs
//! them (natively, and under Wine for Windows).
//!
//! - linux64: `cargo zigbuild` (PyPI's cargo-zigbuild and ziglang, in `.venv`) with the target
//!   `x86_64-unknown-linux-gnu.2.17`, so the `.so` needs no glibc newer than 2.17.
//! - win64: the rustup toolchain with its prebuilt std for `x86_64-pc-windows-gnu` (`rustup
//!   target add`), linked by mingw-w64 with `crt-static`, so the DLL needs no MinGW runtime DLL.
//! - aarch64-linux: `cargo zigbuild` for `aarch64-unknown-linux-gnu.2.17` (glibc 2.17 floor,
//!   linked by zig) with the rustup toolchain and its prebuilt std for the target.
//!
//! Where rustup cannot download a target's std, the cross build falls back to Debian's
//! `rustc-web`/`cargo-web` (Rust 1.96) with `rust-web-src`, building std from source
//! (`-Zbuild-std`): twice the CPU time. Debian's toolchain lives in /usr/bin and is only ever
//! called by full path.

use crate::{root, run};
use std::path::{Path, PathBuf};
use std::process::Command;

pub const LINUX_TARGET: &str = "x86_64-unknown-linux-gnu";
const LINUX_GLIBC_TARGET: &str = "x86_64-unknown-linux-gnu.2.17";
pub const WINDOWS_TARGET: &str = "x86_64-pc-windows-gnu";
const DEBIAN_CARGO: &str = "/usr/bin/cargo";
const DEBIAN_RUSTC: &str = "/usr/bin/rustc";
const DEBIAN_RUST_SRC: &str = "/usr/lib/rustlib/src/rust/library/Cargo.lock";
const MINGW_GCC: &str = "x86_64-w64-mingw32-gcc";
/// Debian's linker for Windows (the DLLs and the harness).
const MINGW_PACKAGES: &[&str] = &["gcc-mingw-w64-x86-64"];
/// Debian's toolchain that builds a cross target's std from source, where rustup cannot
/// download it. Never Debian's `rustc` or `libstd-rust-dev-windows` (Rust 1.63): they replace
/// `rustc-web`.
const DEBIAN_RUST_PACKAGES: &[&str] = &["rustc-web", "cargo-web", "rust-web-src"];
pub const WINE: &str = "/usr/lib/wine/wine64";
/// Every call to the C library's `pow` goes to `fmu_runtime::math::__wrap_pow` (libm's), so
/// both platforms compute the same step sizes: the glibc and msvcrt `pow` differ in the last
/// digit.
const SAME_MATHS: &str = "-C link-arg=-Wl,--wrap=pow";

pub fn has(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Installs Debian packages; on failure, says which were wanted and why.
pub fn apt_install(packages: &[&str], why: &str) -> Result<(), String> {
    let install = || -> Result<(), String> {
        run(Command::new("apt-get").arg("update"))?;
        run(Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends"])
            .args(packages)
            .env("DEBIAN_FRONTEND", "noninteractive"))
    };
    install().map_err(|e| {
        format!(
            "{why} needs the Debian packages {} and they could not be installed ({e}); \
             install them, or run `cargo xtask package --host-only` for a Linux-only build",
            packages.join(" ")
        )
    })
}

fn mingw() -> Result<(), String> {
    if !has(MINGW_GCC, "--version") {
        apt_install(MINGW_PACKAGES, "the win64 build")?;
    }
    Ok(())
}

/// Which standard library a cross build links.
#[derive(Clone, Copy, PartialEq)]
enum Std {
    /// The rustup toolchain's, prebuilt.
    Rustup,
    /// Built from Debian's `rust-web-src` by Debian's `rustc-web`.
    FromSource,
}

/// Whether the rustup toolchain has a prebuilt std for `target`.
fn rustup_has(target: &str) -> bool {
    Command::new("rustc")
        .args(["--print", "target-libdir", "--target", target])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| std::fs::read_dir(String::from_utf8_lossy(&o.stdout).trim()).ok())
        .is_some_and(|mut dir| {
            dir.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with("libstd-")))
        })
}

/// The rustup toolchain's std for `target`, downloaded if missing (`rustup target add`).
/// `XTASK_STD_FROM_SOURCE=1` takes the fallback, to check it where rustup works.
pub fn rustup_std(target: &str) -> bool {
    if std::env::var_os("XTASK_STD_FROM_SOURCE").is_some() {
        return false;
    }
    if rustup_has(target) {
        return true;
    }
    let added = Command::new("rustup")
        .args(["target", "add", target])
        .status()
        .is_ok_and(|s| s.success());
    added && rustup_has(target)
}

/// The std a cross build for `target` links: rustup's, or else one built from source by
/// Debian's toolchain, installed here if missing.
fn cross_std(target: &str) -> Result<Std, String> {
    if rustup_std(target) {
        return Ok(Std::Rustup);
    }
    eprintln!("rustup has no std for {target}: building it from source with Debian's rustc-web");
    let debian_cargo_ok = Command::new(DEBIAN_CARGO)
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("1.96"));
    if !(debian_cargo_ok && Path::new(DEBIAN_RUST_SRC).exists()) {
        apt_install(DEBIAN_RUST_PACKAGES, "a cross build without rustup's std")?;
    }
    Ok(Std::FromSource)
}

/// Points a cross build at Debian's compiler, which builds std from `rust-web-src`.
fn std_from_source(cargo: &mut Command) {
    cargo
        .arg("-Zbuild-std=std,panic_unwind")
        .env("RUSTC", DEBIAN_RUSTC)
        .env("RUSTDOC", "/usr/bin/rustdoc")
        // -Zbuild-std is unstable; Debian's stable compiler allows it with this.
        .env("RUSTC_BOOTSTRAP", "1")
        // The rustup proxies must not pick the compiler.
        .env_remove("RUSTUP_TOOLCHAIN");
}

/// Builds the crates' cdylibs for Linux with a glibc 2.17 floor; returns the directory holding
/// `lib<crate>.so`.
pub fn build_linux(crates: &[&str], venv_bin: &Path) -> Result<PathBuf, String> {
    let mut build = linux_cargo("zigbuild", venv_bin);
    build.arg("--locked");
    for c in crates {
        build.args(["-p", c]);
    }
    run(&mut build)?;
    Ok(linux_dir())
}

/// Where `build_linux` leaves the `.so` files.
pub fn linux_dir() -> PathBuf {
    crate::build_dir().join(LINUX_TARGET).join("release")
}

/// Where `build_windows` leaves the `.dll` files.
pub fn windows_dir() -> PathBuf {
    crate::build_dir()
        .join("win64")
        .join(WINDOWS_TARGET)
        .join("release")
}

/// Where `build_aarch64` leaves the `.so` files.
pub fn aarch64_dir() -> PathBuf {
    crate::build_dir()
        .join("aarch64")
        .join(AARCH64_TARGET)
        .join("release")
}

/// `cargo-zigbuild <command> --release` for linux64 as the packages are built: the
/// workspace's tests (`test`) share every compiled dependency with the package build, since
/// zig's linker and the flags are the same.
pub fn linux_cargo(command: &str, venv_bin: &Path) -> Command {
    let mut cargo = Command::new(venv_bin.join("cargo-zigbuild"));
    cargo
        .args([command, "--release", "--target", LINUX_GLIBC_TARGET])
        .env("PATH", crate::path_with(venv_bin))
        // Only the target's artifacts (the cdylibs): with --target, build scripts do not get it.
        .env(
            "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS",
            SAME_MATHS,
        )
        .env("CARGO_TARGET_DIR", crate::build_dir())
        .current_dir(root());
    cargo
}

pub const AARCH64_TARGET: &str = "aarch64-unknown-linux-gnu";
const AARCH64_GLIBC_TARGET: &str = "aarch64-unknown-linux-gnu.2.17";

/// Builds the crates' cdylibs for aarch64 Linux with a glibc 2.17 floor; returns the directory
/// holding `lib<crate>.so`.
pub fn build_aarch64(crates: &[&str], venv_bin: &Path) -> Result<PathBuf, String> {
    let std = cross_std(AARCH64_TARGET)?;
    let target_dir = crate::build_dir().join("aarch64");
    let mut path = vec![venv_bin.to_path_buf()];
    if std == Std::FromSource {
        // cargo-zigbuild runs the `cargo` it finds first on the PATH: Debian's, from a
        // directory of its own.
        let debian = target_dir.join("debian-cargo");
        std::fs::create_dir_all(&debian).map_err(|e| e.to_string())?;
        let link = debian.join("cargo");
        if !link.exists() {
            std::os::unix::fs::symlink(DEBIAN_CARGO, &link).map_err(|e| e.to_string())?;
        }
        path.insert(0, debian);
    }
    let path = std::env::join_paths(path.into_iter().chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .map_err(|e| e.to_string())?;
    let mut build = Command::new(venv_bin.join("cargo-zigbuild"));
    build
        .args(["zigbuild", "--release", "--locked", "--target"])
        .arg(AARCH64_GLIBC_TARGET)
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", &target_dir)
        .env(
            "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS",
            SAME_MATHS,
        )
        .env_remove("RUSTFLAGS")
        .current_dir(root());
    if std == Std::FromSource {
        std_from_source(&mut build);
    }
    for c in crates {
        build.args(["-p", c]);
    }
    run(&mut build)?;
    Ok(aarch64_dir())
}

/// Builds the crates' cdylibs for Windows; returns the directory holding `<crate>.dll`.
pub fn build_windows(crates: &[&str]) -> Result<PathBuf, String> {
    mingw()?;
    let std = cross_std(WINDOWS_TARGET)?;
    let target_dir = crate::build_dir().join("win64");
    let mut build = Command::new(match std {
        Std::Rustup => env!("CARGO"),
        Std::FromSource => DEBIAN_CARGO,
    });
    build
        .args(["build", "--release", "--locked", "--target", WINDOWS_TARGET])
        .env("CARGO_TARGET_DIR", &target_dir)
        .env("CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER", MINGW_GCC)
        // Static libgcc (unwinding) and C runtime pieces: no libgcc_s_seh-1.dll to ship.
        .env(
            "CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUSTFLAGS",
            format!("-C target-feature=+crt-static {SAME_MATHS}"),
        )
        .env_remove("RUSTFLAGS")
        .current_dir(root());
    if std == Std::FromSource {
        std_from_source(&mut build);
    }
    for c in crates {
        build.args(["-p", c]);
    }
    run(&mut build)?;
    Ok(windows_dir())
}

const HARNESS_FLAGS: [&str; 5] = ["-O2", "-Wall", "-Wextra", "-Werror", "-std=c11"];

/// Compiles `tests/c/fmu_run.c` (with its FMI 3.0 part, `fmu_run3.c`) for this Linux into
/// `target/fmu_run/`; returns that directory.
pub fn harness_linux() -> Result<PathBuf, String> {
    let out = root().join("target/fmu_run");
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    run(Command::new("gcc")
        .args(HARNESS_FLAGS)
        .arg("-D_POSIX_C_SOURCE=200809L")
        // The FMU's malloc resolves to the harness's, which counts (fmu_count.c).
        .arg("-DCOUNT_ALLOCATIONS")
        .arg("-rdynamic")
        .arg("-o")
        .arg(out.join("fmu_run"))
        .arg(root().join("tests/c/fmu_run.c"))
        .arg(root().join("tests/c/fmu_run3.c"))
        .arg(root().join("tests/c/fmu_count.c"))
        .args(["-ldl", "-lm"]))?;
    Ok(out)
}

/// qemu-user and Debian's aarch64 glibc, which runs the aarch64 harness.
const QEMU_PACKAGES: &[&str] = &["qemu-user", "libc6-arm64-cross"];
const AARCH64_LOADER: &str = "/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1";

/// Compiles `tests/c/fmu_run.c` with `fmu_run3.c` for Linux, Windows and aarch64 Linux (zig,
/// glibc 2.17), and the test-only stand-in for `bcryptprimitives.dll` that Wine 8 lacks, into
/// `target/fmu_run/`; makes sure Wine and qemu-user are there.
pub fn harness() -> Result<PathBuf, String> {
    mingw()?;
    if !Path::new(WINE).exists() {
        apt_install(&["wine64"], "the win64 check")?;
    }
    if !(has("qemu-aarch64", "--version") && Path::new(AARCH64_LOADER).exists()) {
        apt_install(QEMU_PACKAGES, "the aarch64 check")?;
    }
    let src = root().join("tests/c");
    let out = harness_linux()?;
    let flags = HARNESS_FLAGS;
    run(Command::new(MINGW_GCC)
        .args(flags)
        .arg("-static")
        .arg("-o")
        .arg(out.join("fmu_run.exe"))
        .arg(src.join("fmu_run.c"))
        .arg(src.join("fmu_run3.c")))?;
    let venv_bin = crate::venv()?.parent().expect("venv bin").to_path_buf();
    run(Command::new(venv_bin.join("python"))
        .args(["-m", "ziglang", "cc", "-target", "aarch64-linux-gnu.2.17"])
        .args(flags)
        .arg("-D_POSIX_C_SOURCE=200809L")
        .arg("-o")
        .arg(out.join("fmu_run_aarch64"))
        .arg(src.join("fmu_run.c"))
        .arg(src.join("fmu_run3.c"))
        .args(["-ldl", "-lm"]))?;
    run(Command::new(MINGW_GCC)
        .args(["-O2", "-Wall", "-Werror", "-shared", "-o"])
        .arg(out.join("bcryptprimitives.dll"))
        .arg(src.join("bcryptprimitives.c"))
        .arg("-lbcrypt"))?;
    // Wine's prefix (target/fmu_run/wine, as xtask/python/platforms.py sets it) made once here:
    // two validation workers starting Wine at once on no prefix would both make it.
    let prefix = out.join("wine");
    if !prefix.join("system.reg").exists() {
        let _usage = crate::stages::status(
            Command::new(WINE)
                .arg(out.join("fmu_run.exe"))
                .env("WINEPREFIX", &prefix)
                .env("WINEDEBUG", "-all")
                .env("WINEDLLOVERRIDES", "mscoree,mshtml="),
        )?;
    }
    Ok(out)
}

/// Every Debian package the test command needs that is missing (mingw-w64, Debian's Rust
/// toolchain where rustup has no std for a cross target, LLVM's tools, Wine, qemu-user, valgrind, libclang
/// for fmi-sim, Chromium for the docs check), installed as each check would install it, at the
/// start and beside the first builds.
pub fn debian_packages() -> Result<(), String> {
    let missing = |packages: &[&'static str]| -> Vec<&'static str> {
        packages
            .iter()
            .copied()
            .filter(|p| {
                !Command::new("dpkg-query")
                    .args(["-W", "-f", "${Status}", p])
                    .output()
                    .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("ok installed"))
            })
            .collect()
    };
    // rustup's std for the cross targets first: Debian's toolchain is wanted only without it.
    let rustup = rustup_std(WINDOWS_TARGET) && rustup_std(AARCH64_TARGET);
    let debian_rust: &[&str] = if rustup { &[] } else { DEBIAN_RUST_PACKAGES };
    let bare = missing(
        &[
            MINGW_PACKAGES,
            debian_rust,
            QEMU_PACKAGES,
            crate::darwin::LLVM_PACKAGES,
            &["wine64"],
        ]
        .concat(),
    );
    // Chromium with its recommended fonts, as docs-check installs it.
    let full = missing(&["valgrind", "libclang-dev", "chromium"]);
    if !bare.is_empty() {
        apt_install(&bare, "the test command")?;
    }
    if !full.is_empty() {
        if bare.is_empty() {
            run(Command::new("apt-get").arg("update"))?;
        }
        run(Command::new("apt-get")
            .args(["install", "-y"])
            .args(&full)
            .env("DEBIAN_FRONTEND", "noninteractive"))?;
    }
    Ok(())
}
