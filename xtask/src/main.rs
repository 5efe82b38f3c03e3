//! `cargo xtask <command>`: packaging, validation, the whole test suite, benchmarks.

mod bench;
mod components;
mod darwin;
mod docs_check;
mod fuzz;
mod linearize;
mod links;
mod mutants;
mod package;
mod platforms;
mod reference;
mod scaffold;
mod stages;
mod suite;
mod svg;

use package::Platforms;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const USAGE: &str = "usage: cargo xtask <command>

commands:
  package [--host-only] [--only <Model>]
             build release binaries and write target/fmu/<Model>.fmu, with linux64 (glibc
             2.17 floor), win64 and darwin64 (macOS 11, x86_64 and arm64) binaries, and
             fmi3/<Model>.fmu with aarch64-linux too; --host-only: the native linux64 binary only;
             --only: that component alone (validate takes it too)
  new <Name> a new component that packages and validates as it stands: a placeholder model
             with one state in fmu/<name>/ (documentation, in-process test), its reference
             scenario from generate.py, its row in the README's table of FMUs, its section
             in docs/variables.md and its workspace entry
  scaffold-check
             scaffolds a component into a copy of the workspace (target/scaffold/) and runs
             dev on it (its tests, its linux64 FMUs validated against its reference)
  validate   fmpy validate + fmutool -check every FMU, check its binaries (glibc floor, DLL
             imports), simulate it in every importer (FMPy, fmi-sim, libcosim, fmucontainer,
             the C harness on linux64 and on win64 under Wine) on its reference-fmus inputs and
             compare with the reference; Windows against Linux, states across platforms
  rust-fmi   every FMU through rust-fmi's crates (importers/rust-fmi): both model descriptions
             read by fmi-schema, every reference scenario as Co-Simulation and Model Exchange,
             FMI 2.0 and 3.0, and df/dx, through the fmi crate
  docs-check the links of the Markdown pages (as `links`), then every FMU's
             documentation/index.html in headless Chromium (installed with apt if missing): no
             console message, the reference plot in the DOM and painted, the screenshot not
             blank; first rejects deliberately broken pages
  links      every relative link and #anchor of the Markdown files git lists (README.md,
             docs/, examples/, ...) points to an existing file and heading; http(s) links are
             not fetched
  test       the whole suite: package, cargo test, docs-check, fuzz, memcheck, the checks'
             own tests, validate, rust-fmi, example, scaffold-check, as jobs on two
             cores; prints the table of what each took and writes it to target/test-stages.md
  dev <Model>
             the inner loop of a change to one component: its crate's tests, its FMUs packaged
             for linux64 alone, validated by fmpy validate, FMPy and the C harness (FMI 2.0 and
             3.0) against its references (xtask/python/quick.py); `cargo xtask test` runs the
             rest

validate, docs-check, memcheck and example package first (add --host-only for a linux64-only package;
validate then fails, as the FMUs lack win64).
  memcheck   the abuse suite (every FMU) under valgrind memcheck: no invalid access, no leak
  example    the examples (examples/drivetrain: drivetrain.py (also with --fmi3), model_exchange.py, ssp.py; examples/motorcycle: motorcycle.py, chain_drive.py; examples/sweep; examples/linear: linear.py after `linearize VariableRatioTransmission --at 0`): runs them, checks them, redraws the plots (chain_drive.py's and model_exchange.py's, which hold this machine's timings or last bits, under target/examples/)
  fuzz [s]   the coverage-guided fuzzer (fuzz/, libFuzzer with ASan) on every model's FMI 2.0
             and FMI 3.0 calls in-process, for s seconds (default 60)
  fuzz-build [--no-asan]
             builds that fuzzer's binary and the random fuzzer's (uninstrumented) and prints
             their paths, one a line; --no-asan: coverage without AddressSanitizer, faster
             (fuzz/plants/run.sh measures planted bugs with them)
  mutants [--sample N] [--seed S] [--crate P]... [--keep] [--diff REV] [--budget M]
             the mutation score of fmu/ (cargo-mutants, installed in target/tools): at most N
             (40) mutants per crate drawn with seed S, tested by the crate's in-process tests
             and those of its dependents, then the missed ones against the packaged FMUs;
             writes docs/mutation.md; --crate: those crates only; --keep: reuse every crate's
             stored outcomes (to assemble the table after rerunning some crates); --diff: the
             mutants of the lines changed since REV, failing on one that survives (REV
             landed: since the commit in xtask/mutants-base.txt, the last one CI passed on;
             a submission's note gives its report); --budget: M minutes in all, one
             mutant at a time in the order that tells most, the rest listed as untested
             (target/mutants/untested.txt)
  bench [--host-only]
             ns per fmi2DoStep and per fmi2SetReal/fmi2GetReal, real-time factor
  linearize <Model> [--scenario NAME] [--at SECONDS]
             the linear model (A, B, C, D) at an operating point, from the FMU's directional
             derivatives: the reference scenario (or NAME) run through FMI 2.0 Model Exchange
             to SECONDS (default: its end); writes target/linear/<Model>.json (eigenvalues,
             modes) and a Bode plot of each declared input-output pair; prints the modes.
             Loads target/fmu/<Model>.fmu (package first)
  references regenerate reference-fmus/ from the independent closed-form solutions
  hashes     SHA-256 of every reference scenario's outputs from the C harness on linux64 and
             win64 (Wine): a refactoring that must change no result compares them";

/// Python tools the suite needs, pinned so CI runs what was validated.
const PYTHON_PACKAGES: &[&str] = &[
    "fmpy==0.3.32",
    "fmu-manipulation-toolbox==2.0",
    "libcosimpy==0.0.6",
    "matplotlib==3.10.9",
    // examples/drivetrain/model_exchange.py: the Model Exchange solver (RK45).
    "scipy==1.17.1",
    // examples/sweep: the parameter study on Dask distributed, with a progress bar.
    "dask==2026.8.0",
    "distributed==2026.8.0",
    "tqdm==4.70.1",
    // The linux64 build: zig links against glibc 2.17.
    "ziglang==0.17.1",
    "cargo-zigbuild==0.24.0",
];

fn main() -> ExitCode {
    if let Some(only) = std::env::var_os(fuzz::COVERAGE_ONLY) {
        return fuzz::rustc_wrapper(&only);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("package") => package::package(platforms_flag(&args), only_flag(&args)).map(|_| ()),
        Some("validate") => packaged(&args, || validate(only_flag(&args))),
        Some("new") => match args.get(1) {
            Some(name) => scaffold::new(&root(), name),
            None => Err(USAGE.to_string()),
        },
        Some("scaffold-check") => scaffold::check(),
        Some("hashes") => packaged(&args, || python_with_harness("hashes.py", None, &[])),
        Some("test") => suite::test(),
        Some("dev") => match args.get(1) {
            Some(model) => suite::dev(model),
            None => Err(USAGE.to_string()),
        },
        Some("bench") => bench::bench(platforms_flag(&args)),
        Some("example") => packaged(&args, example),
        Some("fuzz") => fuzz::fuzz(args.get(1).map_or("60", String::as_str)),
        Some("fuzz-build") => fuzz::build_both(!args.iter().any(|a| a == "--no-asan")),
        Some("memcheck") => packaged(&args, suite::memcheck),
        Some("mutants") => mutants::mutants(&args),
        Some("docs-check") => packaged(&args, docs_check::docs_check),
        Some("rust-fmi") => packaged(&args, rust_fmi_tests),
        Some("links") => links::links(),
        Some("linearize") => linearize::linearize(&args),
        Some("references") => references(),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Packages first, so a task that tests FMUs never judges stale or missing binaries.
fn packaged(args: &[String], task: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    package::package(platforms_flag(args), only_flag(args))?;
    task()
}

/// `--only <Model>`: package (and validate) that component alone.
fn only_flag(args: &[String]) -> Option<&str> {
    let at = args.iter().position(|a| a == "--only")?;
    args.get(at + 1).map(String::as_str)
}

fn platforms_flag(args: &[String]) -> Platforms {
    if args.iter().any(|a| a == "--host-only") {
        Platforms::HostOnly
    } else {
        Platforms::All
    }
}

/// The workspace this xtask works on: its own, or the one named in `XTASK_ROOT` (the scaffold
/// check's copy).
pub fn root() -> PathBuf {
    match std::env::var_os(ROOT) {
        Some(root) => PathBuf::from(root),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("workspace root")
            .to_path_buf(),
    }
}

/// See `root`.
pub const ROOT: &str = "XTASK_ROOT";

/// Where cargo builds the FMUs' binaries: `target/` of this workspace, or the directory in
/// `XTASK_BUILD_DIR`. The scaffold check points its copy of the workspace at the original's, so
/// the copy rebuilds only its own crates, not every dependency again.
pub fn build_dir() -> PathBuf {
    std::env::var_os("XTASK_BUILD_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
}

pub fn run(cmd: &mut Command) -> Result<(), String> {
    let status = stages::status(cmd)?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed with {status}"))
    }
}

/// `.venv` with FMPy and fmu-manipulation-toolbox; created on first use.
pub fn venv() -> Result<PathBuf, String> {
    let venv = root().join(".venv");
    let python = venv.join("bin/python");
    let stamp = venv.join(".installed");
    let wanted = PYTHON_PACKAGES.join("\n");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str()) {
        return Ok(python);
    }
    if run(Command::new("python3")
        .args(["-m", "venv", "--clear"])
        .arg(&venv))
    .is_err()
    {
        // Debian's python3 ships venv separately.
        run(Command::new("apt-get").arg("update"))?;
        run(Command::new("apt-get").args(["install", "-y", "python3-venv", "python3-pip"]))?;
        run(Command::new("python3")
            .args(["-m", "venv", "--clear"])
            .arg(&venv))?;
    }
    run(Command::new(&python).args(["-m", "pip", "install", "--quiet", "--upgrade", "pip"]))?;
    run(Command::new(&python)
        .args(["-m", "pip", "install", "--quiet"])
        .args(PYTHON_PACKAGES))?;
    std::fs::write(&stamp, wanted).map_err(|e| e.to_string())?;
    Ok(python)
}

/// `cargo install --debug` of a tool the suite runs (cargo-mutants), without debug information:
/// unoptimized, a tool builds in a fraction of the CPU time and its results are the same.
pub fn tool_install() -> Command {
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .args(["install", "--debug"])
        .env("CARGO_PROFILE_DEV_DEBUG", "0");
    cargo
}

/// Cargo on `importers/rust-fmi` (rust-fmi's crates as an importer: the fmi-sim command and
/// the tests that drive every FMU through the fmi crate), built into `target/tools/rust-fmi`
/// with the versions of its Cargo.lock (fmi-sim 0.7.0's own, as `cargo install --locked`
/// takes them).
fn rust_fmi_cargo(subcommand: &str) -> Command {
    let root = root();
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .args([subcommand, "--locked", "--manifest-path"])
        .arg(root.join("importers/rust-fmi/Cargo.toml"))
        .env("CARGO_TARGET_DIR", root.join("target/tools/rust-fmi"));
    cargo
}

/// Set to this checkout's fmi-sim for an xtask run on another checkout (the scaffold check's
/// copy), which then takes it rather than building its own.
pub const FMI_SIM_BUILT: &str = "XTASK_FMI_SIM";

/// rust-fmi's `fmi-sim` command, built with the rust-fmi tests (the fmi crates compile once
/// for both); their FMI bindings need libclang.
pub fn fmi_sim() -> Result<PathBuf, String> {
    if let Some(exe) = std::env::var_os(FMI_SIM_BUILT) {
        return Ok(exe.into());
    }
    let has_libclang = Command::new("dpkg")
        .args(["-s", "libclang-dev"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_libclang {
        run(Command::new("apt-get").arg("update"))?;
        run(Command::new("apt-get").args(["install", "-y", "libclang-dev"]))?;
    }
    run(rust_fmi_cargo("test").args(["--no-run", "--test", "rust_fmi"]))?;
    Ok(root().join("target/tools/rust-fmi/debug/fmi-sim"))
}

/// Every packaged FMU through rust-fmi (importers/rust-fmi/tests): both model descriptions
/// read by fmi-schema, every reference scenario run through the fmi crate, Co-Simulation and
/// Model Exchange, FMI 2.0 and 3.0, judged against the references.
fn rust_fmi_tests() -> Result<(), String> {
    fmi_sim()?;
    run(rust_fmi_cargo("test").args(["--test", "rust_fmi"]))
}

/// The validation's own checks, fed deliberately broken inputs (xtask/python/test_checks.py).
fn check_the_checks() -> Result<(), String> {
    let python = venv()?;
    // With the C harness, so that its cases (the parameter plan) run rather than skip, and
    // with every importer (fmi-sim, fmucontainer on the venv's PATH) for the Integer inputs.
    let harness = platforms::harness()?;
    let fmi_sim = fmi_sim()?;
    run(Command::new(python)
        .args(["-m", "unittest", "-v", "test_checks"])
        .env("FMU_RUN_DIR", harness)
        .env("FMI_SIM", fmi_sim)
        .env("PATH", path_with(&root().join(".venv/bin")))
        .current_dir(root().join("xtask/python")))
}

/// Validates every packaged FMU, or only `only` (then no report is written).
fn validate(only: Option<&str>) -> Result<(), String> {
    python_with_harness("validate.py", only, &[])
}

/// docs/validation.md from the rows of the last whole validation and the records the abuse
/// suite, memcheck and the fuzzer left under target/ (the test command validates before they
/// end).
fn validation_report() -> Result<(), String> {
    let root = root();
    run(Command::new(venv()?)
        .arg(root.join("xtask/python/validate.py"))
        .arg("--report")
        .arg(root.join("target/fmu"))
        .arg(root.join("reference-fmus")))
}

/// `xtask/python/<script> target/fmu reference-fmus`, with the C harness and the importers;
/// `only`: that model's FMU alone; `env`: more variables for the script.
fn python_with_harness(
    script: &str,
    only: Option<&str>,
    env: &[(&str, &str)],
) -> Result<(), String> {
    let python = venv()?;
    let fmi_sim = fmi_sim()?;
    let harness = platforms::harness()?;
    let root = root();
    let mut command = Command::new(python);
    if let Some(model) = only {
        command.env("FMU_ONLY", model);
    }
    command.envs(env.iter().copied());
    run(command
        .arg(root.join("xtask/python").join(script))
        .arg(root.join("target/fmu"))
        .arg(root.join("reference-fmus"))
        .env("FMI_SIM", fmi_sim)
        .env("FMU_RUN_DIR", harness)
        .env("WINE", platforms::WINE)
        .env("PATH", path_with(&root.join(".venv/bin"))))
}

/// The examples with their checks; each redraws its plot and results (under target/examples/ for
/// the two whose results depend on the machine).
fn example() -> Result<(), String> {
    let python = venv()?;
    let root = root();
    // examples/linear reads the linear model this writes.
    let args = ["linearize", "VariableRatioTransmission", "--at", "0"];
    linearize::linearize(&args.map(String::from))?;
    for (script, flags) in [
        ("examples/drivetrain/drivetrain.py", &[][..]),
        // The same drivetrain with the FMI 3.0 FMUs in Event Mode, against the FMI 2.0 run.
        ("examples/drivetrain/drivetrain.py", &["--fmi3"][..]),
        ("examples/drivetrain/model_exchange.py", &[]),
        ("examples/drivetrain/ssp.py", &[]),
        ("examples/motorcycle/motorcycle.py", &[]),
        ("examples/motorcycle/chain_drive.py", &[]),
        ("examples/sweep/sweep.py", &[]),
        ("examples/linear/linear.py", &[]),
    ] {
        run(Command::new(&python)
            .arg(root.join(script))
            .arg(root.join("target/fmu"))
            .arg("--check")
            .args(flags))?;
    }
    Ok(())
}

fn references() -> Result<(), String> {
    let python = venv()?;
    let root = root();
    run(Command::new(python).arg(root.join("reference-fmus/generate.py")))
}

pub fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Installs valgrind if it is missing.
pub fn valgrind() -> Result<(), String> {
    if Command::new("valgrind").arg("--version").output().is_err() {
        run(Command::new("apt-get").arg("update"))?;
        run(Command::new("apt-get").args(["install", "-y", "valgrind"]))?;
    }
    Ok(())
}

/// The directory of `.venv`'s programs.
pub fn venv_bin() -> Result<PathBuf, String> {
    Ok(venv()?.parent().expect("venv bin").to_path_buf())
}
