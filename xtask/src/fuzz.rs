//! `cargo xtask fuzz` and `fuzz-build`: the coverage-guided fuzzer (libFuzzer, `fuzz/`) and the
//! random one that seeds it, with their builds.

use crate::stages::stdout_of;
use crate::{build_dir, components, root, run};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// `cargo xtask fuzz-build`: libFuzzer's binary (with ASan if `asan`) and the random fuzzer's
/// (uninstrumented), their paths printed one a line, libFuzzer's first.
pub fn build_both(asan: bool) -> Result<(), String> {
    let libfuzzer = fuzz_build(asan)?;
    let random = random_build(Random::Plain)?;
    println!("{}\n{}", libfuzzer.display(), random.display());
    Ok(())
}

/// Where the fuzzer's binaries are built, beside the FMUs' (corpus and artifacts stay in
/// `target/fuzz/`).
fn fuzz_build_dir() -> PathBuf {
    build_dir().join("fuzz")
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
pub fn fuzz(seconds: &str) -> Result<(), String> {
    let total: u64 = seconds
        .parse()
        .map_err(|_| format!("fuzz: '{seconds}' is not a whole number of seconds"))?;
    fuzz_run(total, &fuzzers()?)
}

/// The two fuzzers' binaries, with AddressSanitizer.
pub struct Fuzzers {
    libfuzzer: PathBuf,
    random: PathBuf,
}

/// Builds both fuzzers and runs the fuzz crate's own tests (one build of the dependencies).
pub fn fuzzers() -> Result<Fuzzers, String> {
    let libfuzzer = fuzz_build(true)?;
    fuzz_test()?;
    Ok(Fuzzers {
        libfuzzer,
        random: random_build(Random::AsLibFuzzer)?,
    })
}

/// `fuzz` for `total` seconds with binaries already built.
pub fn fuzz_run(total: u64, fuzzers: &Fuzzers) -> Result<(), String> {
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

/// The fuzzer's own tests (`fuzz/tests/fuzzer.rs`), built as libFuzzer's binary is
/// (`fuzz_cargo`): they link its library, every component in it, as built for it.
fn fuzz_test() -> Result<(), String> {
    let test = ["test", "--release", "--locked", "--test", "fuzzer"];
    run(&mut fuzz_cargo(&root(), &test, true)?)
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
        // The crates of crates.io go without it (`rustc_wrapper`), so every crate accepts
        // dependencies built otherwise.
        flags.extend([
            "-Zsanitizer=address",
            "-Cunsafe-allow-abi-mismatch=sanitizer",
        ]);
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
    if let Some(archive) = debian_libfuzzer() {
        cargo.env("CUSTOM_LIBFUZZER_PATH", archive);
    }
    Ok(cargo)
}

/// libFuzzer as Debian builds it for the LLVM the compiler uses (`libfuzzer-<major>-dev`): its
/// archive alone, unpacked from the package into `target/tools/` without installing it (which
/// would bring clang), so that libfuzzer-sys links it instead of compiling libFuzzer's C++
/// sources (about 90 s of CPU). None, with the reason printed, where it cannot be had: then
/// libfuzzer-sys compiles them.
fn debian_libfuzzer() -> Option<PathBuf> {
    let found = || -> Result<PathBuf, String> {
        let version = Command::new("rustc")
            .arg("-vV")
            .output()
            .map_err(|e| format!("rustc -vV: {e}"))?;
        let version = String::from_utf8_lossy(&version.stdout);
        let major = version
            .lines()
            .find_map(|l| l.strip_prefix("LLVM version: "))
            .and_then(|v| v.split('.').next())
            .ok_or("rustc -vV names no LLVM version")?
            .to_string();
        let dir = root()
            .join("target/tools")
            .join(format!("libfuzzer-{major}"));
        let archive = dir.join(format!("usr/lib/llvm-{major}/lib/libFuzzer.a"));
        if archive.exists() {
            return Ok(archive);
        }
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let package = format!("libfuzzer-{major}-dev");
        stdout_of(
            Command::new("apt-get")
                .args(["download", &package])
                .current_dir(&dir),
            &format!("apt-get download {package}"),
        )?;
        let deb = std::fs::read_dir(&dir)
            .map_err(|e| e.to_string())?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.extension().is_some_and(|x| x == "deb"))
            .ok_or(format!("apt-get download {package} left no .deb"))?;
        stdout_of(
            Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&dir),
            &format!("dpkg-deb -x {}", deb.display()),
        )?;
        match archive.exists() {
            true => Ok(archive),
            false => Err(format!("{package} holds no {}", archive.display())),
        }
    };
    found()
        .inspect_err(|e| println!("fuzz: libFuzzer is compiled from source ({e})"))
        .ok()
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
pub const COVERAGE_ONLY: &str = "XTASK_COVERAGE_ONLY";

/// xtask as `RUSTC_WRAPPER` (`xtask <rustc> <arguments>`): rustc without the sanitizer-coverage
/// flags, except for the crate named by `only`, and without AddressSanitizer for the crates of
/// crates.io (cargo caps their lints): the fuzzer looks for faults in this project's code, and
/// those crates (faer, nalgebra, diffsol and what they bring) then build faster. LeakSanitizer
/// still sees every allocation: it replaces the allocator of the whole process.
pub fn rustc_wrapper(only: &std::ffi::OsStr) -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(rustc) = args.next() else {
        return ExitCode::FAILURE;
    };
    let args: Vec<std::ffi::OsString> = args.collect();
    let covered = args
        .windows(2)
        .any(|w| w[0] == "--crate-name" && w[1] == only);
    let third_party = args
        .windows(2)
        .any(|w| w[0] == "--cap-lints" && w[1] == "allow");
    let dropped = |a: &std::ffi::OsString| {
        let a = a.to_string_lossy();
        let coverage =
            a == "-Cpasses=sancov-module" || a.starts_with("-Cllvm-args=-sanitizer-coverage");
        (coverage && !covered) || (third_party && a == "-Zsanitizer=address")
    };
    let kept = args.iter().filter(|a| !dropped(a));
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
