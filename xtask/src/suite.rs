//! `cargo xtask test`, the whole suite as timed jobs on two cores, and `cargo xtask dev`, the
//! inner loop of a change to one component.

use crate::fuzz::{fuzz_run, fuzzers};
use crate::package::{self, Platforms};
use crate::{
    check_the_checks, components, docs_check, example, fmi_sim, platforms, python_with_harness,
    root, run, rust_fmi_tests, scaffold, stages, valgrind, validation_report, venv, venv_bin,
};
use std::path::Path;
use std::process::Command;

/// Runs the abuse suite, which drives every packaged FMU through instantiate, simulate,
/// get/set/serialize state, reset and free, under valgrind memcheck. Valgrind runs one thread
/// at a time: each test is a process of its own, two at a time.
pub fn memcheck() -> Result<(), String> {
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
    let listed = stages::stdout_of(
        abuse().args(["--list", "--format", "terse"]),
        "the abuse suite's tests",
    )?;
    let tests: Vec<String> = String::from_utf8_lossy(&listed)
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

pub fn test() -> Result<(), String> {
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
    const DARWIN: &str = "package: darwin build";
    const WRITE: &str = "package: write FMI 2.0 and 3.0";
    const FMI_SIM: &str = "rust-fmi build (fmi-sim, tests)";
    const PACKAGED_TESTS: &str = "cargo test: packaged FMUs, xtask";
    const FUZZ_BUILD: &str = "fuzz: build and the fuzzer's tests";
    const FUZZ_RUN: &str = "fuzz: 60 s";
    const HARNESS: &str = "C harness";
    const VALIDATE: &str = "validate";
    const MEMCHECK: &str = "memcheck";
    let build = |platform| move || package::build(all, platform, None).map(|_| ());
    let jobs = vec![
        job(DEBIAN, &[], platforms::debian_packages),
        job(VENV, &[], || venv().map(|_| ())),
        job(LINUX, &[VENV], build(Platform::Linux)),
        job(WINDOWS, &[DEBIAN], build(Platform::Windows)),
        job(AARCH64, &[DEBIAN, VENV], build(Platform::Aarch64)),
        job(DARWIN, &[DEBIAN, VENV], build(Platform::Darwin)),
        job(WRITE, &[LINUX, WINDOWS, AARCH64, DARWIN], || {
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
        // The two long checks before the short ones: while one worker builds the fuzzers and
        // fuzzes, the other takes them, and the short ones fill in at the end.
        job("examples", &[WRITE], example),
        // After the linux64 build, whose dependencies it reuses (the copy's fuzz crate is not
        // built).
        job("scaffold check", &[LINUX, HARNESS], scaffold::check),
        job("rust-fmi tests", &[WRITE, FMI_SIM], rust_fmi_tests),
        job("docs check", &[WRITE, DEBIAN], docs_check::docs_check),
        job("the checks' checks", &[FMI_SIM, HARNESS], check_the_checks),
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

/// Where `cargo xtask dev` packages (linux64 only), apart from `cargo xtask package`'s
/// `target/fmu`.
pub const DEV_FMUS: &str = "target/dev/fmu";

/// `cargo xtask dev <Model>`: what a change to one component needs checked before the whole
/// suite.
pub fn dev(model: &str) -> Result<(), String> {
    let component = components::components()?
        .into_iter()
        .find(|c| c.model == model)
        .ok_or_else(|| format!("dev: no component packages {model}"))?;
    let venv_bin = venv_bin()?;
    run(platforms::linux_cargo("test", &venv_bin).args(["--locked", "-p", &component.crate_name]))?;
    // Its own folder: a linux64-only FMU never replaces a packaged release one.
    package::package_into(Platforms::HostOnly, Some(model), DEV_FMUS)?;
    let harness = platforms::harness_linux()?;
    let root = root();
    run(Command::new(venv()?)
        .arg(root.join("xtask/python/quick.py"))
        .arg(root.join(DEV_FMUS))
        .arg(root.join("reference-fmus"))
        .arg(model)
        .env("FMU_RUN_DIR", &harness))?;
    // A refactoring changes no result: the linux64 hashes of its reference scenarios, once
    // `cargo xtask hashes` has kept them (a component just scaffolded has none).
    let kept = std::fs::read_to_string(root.join("docs/result-hashes.txt")).unwrap_or_default();
    if !kept
        .lines()
        .any(|l| l.split([' ', '/']).next() == Some(model))
    {
        println!("dev: {model} has no results kept in docs/result-hashes.txt yet: not compared");
        return Ok(());
    }
    run(Command::new(venv()?)
        .arg(root.join("xtask/python/hashes.py"))
        .arg(root.join(DEV_FMUS))
        .arg(root.join("reference-fmus"))
        .args(["--check", "linux64", model])
        .env("FMU_RUN_DIR", harness))
}
