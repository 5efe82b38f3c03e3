//! `cargo xtask <command>`: packaging, validation, the whole test suite, benchmarks.

mod bench;
mod components;
mod docs_check;
mod mutants;
mod package;
mod platforms;
mod reference;
mod scaffold;
mod stages;
mod svg;

use package::Platforms;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const USAGE: &str = "usage: cargo xtask <command>

commands:
  package [--host-only] [--only <Model>]
             build release binaries and write target/fmu/<Model>.fmu, with linux64 (glibc
             2.17 floor) and win64 binaries; --host-only: the native linux64 binary only;
             --only: that component alone (validate takes it too)
  new <Name> a new component that packages and validates as it stands: a placeholder model
             with one state in fmu/<name>/ (documentation, in-process test), its reference
             scenario from generate.py, its README rows and its workspace entry
  scaffold-check
             scaffolds a component into a copy of the workspace (target/scaffold/), packages
             it and validates it
  validate   fmpy validate + fmutool -check every FMU, check its binaries (glibc floor, DLL
             imports), simulate it in every importer (FMPy, fmi-sim, libcosim, fmucontainer,
             the C harness on linux64 and on win64 under Wine) on its reference-fmus inputs and
             compare with the reference; Windows against Linux, states across platforms
  docs-check every FMU's documentation/index.html in headless Chromium (installed with apt if
             missing): no console message, the reference plot in the DOM and painted, the
             screenshot not blank; first rejects deliberately broken pages
  test       the whole suite: package, cargo test, docs-check, mutants --diff <base>, fuzz,
             memcheck, the checks' own tests, validate, example, scaffold-check, as jobs on two
             cores; prints the table of what each took and writes it to target/test-stages.md
  dev <Model>
             the inner loop of a change to one component: its crate's tests, its FMUs packaged
             for linux64 alone, validated by fmpy validate, FMPy and the C harness (FMI 2.0 and
             3.0) against its references (xtask/python/quick.py); `cargo xtask test` runs the
             rest

validate, docs-check, memcheck and example package first (add --host-only for a linux64-only package;
validate then fails, as the FMUs lack win64).
  memcheck   the abuse suite (every FMU) under valgrind memcheck: no invalid access, no leak
  example    the examples (examples/drivetrain: drivetrain.py (also with --fmi3), model_exchange.py, ssp.py; examples/motorcycle: motorcycle.py, chain_drive.py; examples/sweep): runs them, checks them, redraws the plots (chain_drive.py's and model_exchange.py's, which hold this machine's timings or last bits, under target/examples/)
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
             mutants of the lines changed since REV, failing on one that survives (the test
             command runs it since the commit in xtask/mutants-base.txt, the last one CI
             passed on, within a budget of 10 minutes); --budget: M minutes in all, one
             mutant at a time in the order that tells most, the rest listed as untested
             (target/mutants/untested.txt)
  bench [--host-only]
             ns per fmi2DoStep and per fmi2SetReal/fmi2GetReal, real-time factor
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

/// The Rust importer, installed into target/tools (it needs libclang for its FMI bindings).
const FMI_SIM_VERSION: &str = "0.7.0";

fn main() -> ExitCode {
    if let Some(only) = std::env::var_os(COVERAGE_ONLY) {
        return rustc_wrapper(&only);
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
        Some("test") => test(),
        Some("dev") => match args.get(1) {
            Some(model) => dev(model),
            None => Err(USAGE.to_string()),
        },
        Some("bench") => bench::bench(platforms_flag(&args)),
        Some("example") => packaged(&args, example),
        Some("fuzz") => fuzz(args.get(1).map_or("60", String::as_str)),
        Some("fuzz-build") => {
            let asan = !args.iter().any(|a| a == "--no-asan");
            fuzz_build(asan).and_then(|libfuzzer| {
                let random = random_build(Random::Plain)?;
                println!("{}\n{}", libfuzzer.display(), random.display());
                Ok(())
            })
        }
        Some("memcheck") => packaged(&args, memcheck),
        Some("mutants") => mutants::mutants(&args),
        Some("docs-check") => packaged(&args, docs_check::docs_check),
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

/// Where the fuzzer's binaries are built, beside the FMUs' (corpus and artifacts stay in
/// `target/fuzz/`).
fn fuzz_build_dir() -> PathBuf {
    build_dir().join("fuzz")
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

/// `cargo install --debug` of a tool the suite runs (fmi-sim, cargo-mutants): fmi-sim's 201
/// crates build in 170 s of CPU instead of 460 s, and its results are the same to the bit (each
/// scenario of the validation compared); it runs 6 s longer over the validation.
pub fn tool_install() -> Command {
    let mut cargo = Command::new(env!("CARGO"));
    cargo.args(["install", "--debug"]);
    cargo
}

/// `target/tools/bin/fmi-sim`, installed with `cargo install` on first use.
fn fmi_sim() -> Result<PathBuf, String> {
    let tools = root().join("target/tools");
    let exe = tools.join("bin/fmi-sim");
    let installed = Command::new(&exe)
        .arg("--version")
        .output()
        // 0.7.0 prints its version as an error, on stderr.
        .map(|o| {
            let text = [o.stdout, o.stderr].concat();
            String::from_utf8_lossy(&text).contains(FMI_SIM_VERSION)
        })
        .unwrap_or(false);
    if installed {
        return Ok(exe);
    }
    let has_libclang = Command::new("dpkg")
        .args(["-s", "libclang-dev"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_libclang {
        run(Command::new("apt-get").arg("update"))?;
        run(Command::new("apt-get").args(["install", "-y", "libclang-dev"]))?;
    }
    run(tool_install()
        .args([
            "fmi-sim",
            "--locked",
            "--version",
            FMI_SIM_VERSION,
            "--root",
        ])
        .arg(&tools))?;
    Ok(exe)
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

/// The coverage-guided fuzzer (`fuzz/`): libFuzzer on every model's FMI 2.0 and FMI 3.0 C ABI
/// in-process, for `seconds`, from the checked-in corpus (`fuzz/corpus/fmi_calls`, read only),
/// what earlier runs found (`target/fuzz/corpus`, where new inputs go) and sequences of the
/// random generator (`random_sequences --record`, a sixtieth of the time, at least 1 s, into
/// `target/fuzz/seeds`). Those seeds give libFuzzer the depth a random 400-call sequence
/// reaches and its own byte mutations rarely build (restore, then switch modes, then ...).
/// Built with AddressSanitizer, whose LeakSanitizer makes a leak a failure (the stable
/// compiler takes `-Zsanitizer` with RUSTC_BOOTSTRAP=1), guided by the runtime's code coverage
/// and the sequences' protocol features (`fuzz_build`), edges only (`-use_counters=0`). A
/// failure leaves its input in `target/fuzz/artifacts/`; replay it with
/// `target/fuzz/x86_64-unknown-linux-gnu/release/fmi_calls <file>`. Inputs up to 1 KB, about
/// a hundred calls (longer seeds are cut there), from the start (`-len_control=0`).
fn fuzz(seconds: &str) -> Result<(), String> {
    let total: u64 = seconds
        .parse()
        .map_err(|_| format!("fuzz: '{seconds}' is not a whole number of seconds"))?;
    fuzz_run(total, &fuzzers()?)
}

/// The two fuzzers' binaries, with AddressSanitizer.
struct Fuzzers {
    libfuzzer: PathBuf,
    random: PathBuf,
}

/// Builds both fuzzers and runs the fuzz crate's own tests (one build of the dependencies).
fn fuzzers() -> Result<Fuzzers, String> {
    let libfuzzer = fuzz_build(true)?;
    fuzz_test(&root(), true)?;
    Ok(Fuzzers {
        libfuzzer,
        random: random_build(Random::AsLibFuzzer)?,
    })
}

/// `fuzz` for `total` seconds with binaries already built.
fn fuzz_run(total: u64, fuzzers: &Fuzzers) -> Result<(), String> {
    let root = root();
    let scratch = root.join("target/fuzz/corpus");
    let artifacts = root.join("target/fuzz/artifacts");
    let seeds = root.join("target/fuzz/seeds");
    let _ = std::fs::remove_dir_all(&seeds);
    for dir in [&scratch, &artifacts] {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    // The seeds: from a fixed first seed, so a run is repeatable. Few: libFuzzer replays every
    // seed before its clock starts, under ASan about 20 inputs a second.
    let seeding = (total / 60).max(1);
    run(Command::new(&fuzzers.random)
        .arg(seeding.to_string())
        .args(["1", "--record"])
        .arg(&seeds)
        .current_dir(&root))?;
    run(Command::new(&fuzzers.libfuzzer)
        .arg(&scratch)
        .arg(root.join("fuzz/corpus/fmi_calls"))
        .arg(&seeds)
        .arg(format!(
            "-max_total_time={}",
            total.saturating_sub(seeding).max(1)
        ))
        .args([
            "-max_len=1024",
            "-len_control=0",
            "-use_counters=0",
            "-timeout=10",
            "-rss_limit_mb=4096",
        ])
        .arg("-print_final_stats=1")
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .current_dir(&root))?;
    // What ran, for docs/validation.md (beside the abuse suite's records).
    let models: Vec<String> = components::components()?
        .into_iter()
        .map(|c| c.model)
        .collect();
    let record = root.join("target/abuse-results/coverage_guided_fuzzing.native.txt");
    std::fs::create_dir_all(root.join("target/abuse-results")).map_err(|e| e.to_string())?;
    std::fs::write(
        &record,
        format!(
            "coverage-guided fuzzing (libFuzzer, AddressSanitizer and LeakSanitizer; fuzz/) of \
             call sequences of the FMI 2.0 and FMI 3.0 APIs of every model in-process, from \
             the checked-in corpus and the random generator's sequences, for {total} s: no \
             crash, hang, leak or failed oracle\n{}\n",
            models.join(", ")
        ),
    )
    .map_err(|e| format!("{}: {e}", record.display()))
}

/// The fuzzer's own tests, built as libFuzzer's binary is (`fuzz_cargo`): every dependency is
/// shared with that build. They link every component of the workspace at `root`.
pub fn fuzz_test(root: &Path, locked: bool) -> Result<(), String> {
    let test = ["test", "--release", "--lib"];
    run(fuzz_cargo(root, &test, true)?.args(locked.then_some("--locked")))
}

const FUZZ_TRIPLE: &str = "x86_64-unknown-linux-gnu";

/// `cargo <args>` on the fuzz crate of the workspace at `root`, built into `fuzz_build_dir()`
/// for libFuzzer, with ASan if `asan`: cargo-fuzz's flags, but sanitizer coverage only for the
/// runtime's own code (`rustc_wrapper`). With the protocol features the sequences report
/// (`fmu_fuzz::Guided`), a few hundred features in all, so the corpus stays small and the input
/// that went deepest is mutated often (docs/fuzzing.md). The fuzzer's tests and the random
/// fuzzer are built so too: one build of the dependencies serves all three.
fn fuzz_cargo(root: &Path, args: &[&str], asan: bool) -> Result<Command, String> {
    let mut flags = vec![
        "-Cpasses=sancov-module",
        "-Cllvm-args=-sanitizer-coverage-level=4",
        "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
        "-Cllvm-args=-sanitizer-coverage-pc-table",
        "-Cllvm-args=-sanitizer-coverage-trace-compares",
        "-Cllvm-args=-simplifycfg-branch-fold-threshold=0",
        "-Cllvm-args=-sanitizer-coverage-stack-depth",
        "--cfg fuzzing",
        "-Cdebug-assertions",
        "-Ccodegen-units=1",
    ];
    if asan {
        flags.push("-Zsanitizer=address");
    }
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .args(args)
        .arg("--manifest-path")
        .arg(root.join("fuzz/Cargo.toml"))
        // --target keeps the flags off build scripts, as cargo-fuzz does.
        .args(["--target", FUZZ_TRIPLE])
        .env("CARGO_TARGET_DIR", fuzz_build_dir())
        .env("RUSTFLAGS", flags.join(" "))
        .env("RUSTC_BOOTSTRAP", "1")
        .env(
            "RUSTC_WRAPPER",
            std::env::current_exe().map_err(|e| e.to_string())?,
        )
        .env(COVERAGE_ONLY, "fmu_runtime")
        .current_dir(root);
    Ok(cargo)
}

/// How the random fuzzer (`fuzz/src/bin/random_sequences.rs`) is built.
#[derive(Clone, Copy)]
enum Random {
    /// As libFuzzer's binary, with ASan: the test command, where it shares that build.
    AsLibFuzzer,
    /// Without instrumentation: the planted-bug measurements (fuzz/plants/run.sh), so that its
    /// speed is that of docs/fuzzing.md.
    Plain,
}

/// The random fuzzer's binary.
fn random_build(how: Random) -> Result<PathBuf, String> {
    let release = [
        "build",
        "--release",
        "--locked",
        "--bin",
        "random_sequences",
    ];
    match how {
        Random::AsLibFuzzer => {
            run(&mut fuzz_cargo(&root(), &release, true)?)?;
            Ok(fuzz_build_dir().join(format!("{FUZZ_TRIPLE}/release/random_sequences")))
        }
        Random::Plain => {
            run(Command::new(env!("CARGO"))
                .args(release)
                .arg("--manifest-path")
                .arg(root().join("fuzz/Cargo.toml"))
                .env("CARGO_TARGET_DIR", fuzz_build_dir().join("plain"))
                .current_dir(root()))?;
            Ok(fuzz_build_dir().join("plain/release/random_sequences"))
        }
    }
}

/// Set for xtask as cargo's `RUSTC_WRAPPER` (`fuzz_build`): the one crate compiled with
/// sanitizer coverage.
const COVERAGE_ONLY: &str = "XTASK_COVERAGE_ONLY";

/// xtask as `RUSTC_WRAPPER` (`xtask <rustc> <arguments>`): rustc without the sanitizer-coverage
/// flags, except for the crate named by `only`.
fn rustc_wrapper(only: &std::ffi::OsStr) -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(rustc) = args.next() else {
        return ExitCode::FAILURE;
    };
    let args: Vec<std::ffi::OsString> = args.collect();
    let covered = args
        .windows(2)
        .any(|w| w[0] == "--crate-name" && w[1] == only);
    let coverage_flag = |a: &std::ffi::OsString| {
        let a = a.to_string_lossy();
        a == "-Cpasses=sancov-module" || a.starts_with("-Cllvm-args=-sanitizer-coverage")
    };
    let kept = args.iter().filter(|a| covered || !coverage_flag(a));
    match Command::new(rustc).args(kept).status() {
        Ok(s) => ExitCode::from(s.code().map_or(1, |c| c as u8)),
        Err(e) => {
            eprintln!("xtask: rustc: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The libFuzzer binary of `fuzz/`, with ASan if `asan`.
fn fuzz_build(asan: bool) -> Result<PathBuf, String> {
    let release = ["build", "--release", "--locked", "--bin", "fmi_calls"];
    run(&mut fuzz_cargo(&root(), &release, asan)?)?;
    Ok(fuzz_build_dir().join(format!("{FUZZ_TRIPLE}/release/fmi_calls")))
}

/// The examples with their checks; each redraws its plot and results (under target/examples/ for
/// the two whose results depend on the machine).
fn example() -> Result<(), String> {
    let python = venv()?;
    let root = root();
    for (script, flags) in [
        ("examples/drivetrain/drivetrain.py", &[][..]),
        // The same drivetrain with the FMI 3.0 FMUs in Event Mode, against the FMI 2.0 run.
        ("examples/drivetrain/drivetrain.py", &["--fmi3"][..]),
        ("examples/drivetrain/model_exchange.py", &[]),
        ("examples/drivetrain/ssp.py", &[]),
        ("examples/motorcycle/motorcycle.py", &[]),
        ("examples/motorcycle/chain_drive.py", &[]),
        ("examples/sweep/sweep.py", &[]),
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

/// Runs the abuse suite, which drives every packaged FMU through instantiate, simulate,
/// get/set/serialize state, reset and free, under valgrind memcheck. Valgrind runs one thread
/// at a time: each test is a process of its own, two at a time.
fn memcheck() -> Result<(), String> {
    valgrind()?;
    let abuse = || {
        let mut cargo = Command::new(env!("CARGO"));
        cargo
            .args([
                "test",
                "--release",
                "-p",
                "fmu-harness",
                "--test",
                "abuse",
                "--",
            ])
            .current_dir(root());
        cargo
    };
    let listed = abuse()
        .args(["--list", "--format", "terse"])
        .output()
        .map_err(|e| format!("the abuse suite's tests: {e}"))?;
    if !listed.status.success() {
        return Err(format!(
            "the abuse suite's tests: {}",
            String::from_utf8_lossy(&listed.stderr)
        ));
    }
    let tests: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_string)
        .collect();
    if tests.is_empty() {
        return Err("the abuse suite lists no test".into());
    }
    // The longest first (under valgrind: 70 to 150 s each, the others 5 to 15 s), so that the
    // two processes end together.
    let long =
        |t: &String| !(t.contains("random_call_sequences") || t.contains("free_all_their_memory"));
    let mut tests = tests;
    tests.sort_by_key(long);
    let runner = "valgrind -q --error-exitcode=99 --leak-check=full \
                  --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect";
    let runner: String = runner.split_whitespace().collect::<Vec<_>>().join(" ");
    let commands = tests
        .iter()
        .map(|test| {
            let mut cargo = abuse();
            cargo
                .args(["--exact", test])
                .env("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER", &runner)
                .env("FMU_MEMCHECK", "1");
            cargo
        })
        .collect();
    stages::run_pool(commands, 2)
}

/// What `git status` and `git diff` say of the tree: a test run must leave it as it found it.
fn tree_state(root: &Path) -> Result<String, String> {
    let mut state = String::new();
    for args in [
        &["status", "--porcelain=v1"][..],
        &["diff", "--no-ext-diff"][..],
    ] {
        let out = Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .map_err(|e| format!("git {}: {e}", args[0]))?;
        state += &String::from_utf8_lossy(&out.stdout);
    }
    Ok(state)
}

fn test() -> Result<(), String> {
    let before = tree_state(&root())?;
    everything()?;
    let after = tree_state(&root())?;
    if after != before {
        let status = Command::new("git")
            .args(["status", "--short"])
            .current_dir(root())
            .output()
            .map_err(|e| e.to_string())?;
        return Err(format!(
            "the test run changed the tree (results that change from run to run belong under \
             target/; committed ones must be regenerated and committed):\n{}",
            String::from_utf8_lossy(&status.stdout)
        ));
    }
    Ok(())
}

/// The test command's minutes for the mutants of a change (`mutants --budget`), installing
/// cargo-mutants and building included: a change of any size costs at most this.
const MUTANTS_BUDGET_MINUTES: &str = "10";

/// The whole suite, as jobs on CI's two cores: the builds of the three platforms, of the
/// fuzzers and of the tools overlap each other and the single-threaded checks (valgrind, the
/// Python importers, Wine, qemu, libFuzzer). The table of what each took is printed and
/// written to `target/test-stages.md`.
fn everything() -> Result<(), String> {
    use package::Platform;
    use stages::job;
    let started = std::time::Instant::now();
    let all = Platforms::All;
    let built = std::sync::Mutex::new(None);
    // In order of priority: a free worker takes the first job whose prerequisites passed. The
    // builds come first (they are most of the CPU time); the checks that run one thread each
    // then pair up on the two cores.
    const DEBIAN: &str = "Debian packages";
    const VENV: &str = "Python venv";
    const LINUX: &str = "package: linux64 build";
    const WINDOWS: &str = "package: win64 build";
    const AARCH64: &str = "package: aarch64 build";
    const WRITE: &str = "package: write FMI 2.0 and 3.0";
    const FMI_SIM: &str = "fmi-sim install";
    const PACKAGED_TESTS: &str = "cargo test: packaged FMUs, xtask";
    const FUZZ_BUILD: &str = "fuzz: build and the fuzzer's tests";
    const FUZZ_RUN: &str = "fuzz: 60 s";
    const HARNESS: &str = "C harness";
    const VALIDATE: &str = "validate";
    const MEMCHECK: &str = "memcheck";
    let jobs = vec![
        job(DEBIAN, &[], platforms::debian_packages),
        job(VENV, &[], || venv().map(|_| ())),
        job(LINUX, &[VENV], || {
            package::build(all, Platform::Linux, None).map(|_| ())
        }),
        job(WINDOWS, &[DEBIAN], || {
            package::build(all, Platform::Windows, None).map(|_| ())
        }),
        job(AARCH64, &[DEBIAN, VENV], || {
            package::build(all, Platform::Aarch64, None).map(|_| ())
        }),
        job(WRITE, &[LINUX, WINDOWS, AARCH64], || {
            package::write(all, None).map(|_| ())
        }),
        job(FMI_SIM, &[DEBIAN], || fmi_sim().map(|_| ())),
        job("cargo test: in-process", &[LINUX], in_process_tests),
        job(PACKAGED_TESTS, &[WRITE], packaged_tests),
        job(HARNESS, &[DEBIAN, VENV], || {
            platforms::harness().map(|_| ())
        }),
        job(VALIDATE, &[WRITE, FMI_SIM, HARNESS], || {
            python_with_harness("validate.py", None, &[("VALIDATE_REPORT_LATER", "1")])
        }),
        job(FUZZ_BUILD, &[], || {
            *built.lock().expect("one job at a time") = Some(fuzzers()?);
            Ok(())
        }),
        job(MEMCHECK, &[PACKAGED_TESTS, DEBIAN], memcheck),
        job(FUZZ_RUN, &[FUZZ_BUILD], || {
            match built.lock().expect("one job at a time").as_ref() {
                Some(f) => fuzz_run(60, f),
                None => Err("no fuzzer built".into()),
            }
        }),
        job("docs check", &[WRITE, DEBIAN], docs_check::docs_check),
        job("the checks' checks", &[FMI_SIM, HARNESS], check_the_checks),
        job("examples", &[WRITE], example),
        job("mutants (diff)", &[VENV, DEBIAN], || {
            // The mutants of what this submission changed in fmu/ (the whole set: `cargo xtask
            // mutants`).
            let base = mutants::submission_base(&root());
            let args = [
                "mutants",
                "--diff",
                &base,
                "--budget",
                MUTANTS_BUDGET_MINUTES,
            ];
            mutants::mutants(&args.map(str::to_string))
        }),
        // After the builds whose dependencies it reuses.
        job(
            "scaffold check",
            &[LINUX, WINDOWS, AARCH64, FUZZ_BUILD, FMI_SIM, HARNESS],
            scaffold::check,
        ),
        job(
            "validation report",
            &[VALIDATE, PACKAGED_TESTS, MEMCHECK, FUZZ_RUN],
            validation_report,
        ),
    ];
    let (records, result) = stages::run_jobs(jobs, 2);
    let table = stages::table(&records, started.elapsed());
    let path = root().join("target/test-stages.md");
    let _ = std::fs::write(&path, &table);
    println!("\n{table}\n(written to {})", path.display());
    result
}

/// The in-process tests of every crate under `fmu/` and of modelDescription, built as the
/// linux64 packages are (`platforms::linux_cargo`: their dependencies are the packages'); the
/// packaged-FMU suite and xtask's own tests are `packaged_tests`.
fn in_process_tests() -> Result<(), String> {
    run(platforms::linux_cargo("test", &venv_bin()?).args([
        "--locked",
        "--workspace",
        "--exclude",
        "fmu-harness",
        "--exclude",
        "xtask",
    ]))
}

/// The packaged-FMU suite (`tests/`) and xtask's own tests, built as xtask is (they share its
/// dependencies; they link no FMU, which they load from target/fmu).
fn packaged_tests() -> Result<(), String> {
    run(Command::new(env!("CARGO"))
        .args([
            "test",
            "--release",
            "--locked",
            "-p",
            "fmu-harness",
            "-p",
            "xtask",
        ])
        .current_dir(root()))
}

/// `cargo xtask dev <Model>`: what a change to one component needs checked before the whole
/// suite.
fn dev(model: &str) -> Result<(), String> {
    let component = components::components()?
        .into_iter()
        .find(|c| c.model == model)
        .ok_or_else(|| format!("dev: no component packages {model}"))?;
    let venv_bin = venv_bin()?;
    run(platforms::linux_cargo("test", &venv_bin).args(["--locked", "-p", &component.crate_name]))?;
    package::package(Platforms::HostOnly, Some(model))?;
    let harness = platforms::harness_linux()?;
    let root = root();
    run(Command::new(venv()?)
        .arg(root.join("xtask/python/quick.py"))
        .arg(root.join("target/fmu"))
        .arg(root.join("reference-fmus"))
        .arg(model)
        .env("FMU_RUN_DIR", harness))
}

/// The directory of `.venv`'s programs.
pub fn venv_bin() -> Result<PathBuf, String> {
    Ok(venv()?.parent().expect("venv bin").to_path_buf())
}
