//! xtask as cargo's `RUSTC_WRAPPER` (`xtask <rustc> <arguments>`) in the fuzz build, when
//! `fuzz::COVERAGE_ONLY` is set: sanitizer coverage for the crate it names alone, and no
//! AddressSanitizer for the crates of crates.io (cargo caps their lints), which are also
//! optimized less (`less_optimized`): the fuzzer looks for faults in this project's code, and
//! those crates then build faster. LeakSanitizer still sees every allocation: it replaces the
//! allocator of the whole process.

use crate::fuzz::COVERAGE_ONLY;
use std::ffi::OsString;
use std::process::{Command, ExitCode};

/// `Some` exit code if xtask runs as the rustc wrapper.
pub fn run_if_asked() -> Option<ExitCode> {
    let only = std::env::var_os(COVERAGE_ONLY)?;
    let mut args = std::env::args_os().skip(1);
    let Some(rustc) = args.next() else {
        return Some(ExitCode::FAILURE);
    };
    let args = coverage_args(args.collect(), &only);
    Some(match Command::new(rustc).args(&args).status() {
        Ok(s) => ExitCode::from(s.code().map_or(1, |c| c as u8)),
        Err(e) => {
            eprintln!("xtask: rustc: {e}");
            ExitCode::FAILURE
        }
    })
}

/// The fuzz build's arguments: coverage for the crate `only`, ASan for this project's crates.
fn coverage_args(args: Vec<OsString>, only: &std::ffi::OsStr) -> Vec<OsString> {
    let covered = args
        .windows(2)
        .any(|w| w[0] == "--crate-name" && w[1] == only);
    let third_party = args
        .windows(2)
        .any(|w| w[0] == "--cap-lints" && w[1] == "allow");
    let dropped = |a: &OsString| {
        let a = a.to_string_lossy();
        let coverage =
            a == "-Cpasses=sancov-module" || a.starts_with("-Cllvm-args=-sanitizer-coverage");
        (coverage && !covered) || (third_party && a == "-Zsanitizer=address")
    };
    let kept: Vec<OsString> = args.into_iter().filter(|a| !dropped(a)).collect();
    let maths = kept
        .windows(2)
        .any(|w| w[0] == "--crate-name" && w[1] == "libm");
    let for_target = kept.iter().any(|a| a == "--target");
    if third_party && for_target && !maths {
        less_optimized(kept)
    } else {
        kept
    }
}

/// A crate of crates.io in the fuzz build, but libm (the models' maths): what the fuzzed calls
/// run of theirs is mostly generic code, compiled in this project's crates, so their own code is
/// optimized less (`-C opt-level=1`) and without line tables.
fn less_optimized(args: Vec<OsString>) -> Vec<OsString> {
    let mut changed: Vec<OsString> = Vec::with_capacity(args.len());
    for a in args {
        let option = changed.last().is_some_and(|p| p == "-C");
        let text = a.to_string_lossy();
        // Those its profile leaves unoptimized (faer's) stay so.
        changed.push(
            if option && (text == "opt-level=3" || text == "opt-level=2") {
                "opt-level=1".into()
            } else if option && text.starts_with("debuginfo=") {
                "debuginfo=0".into()
            } else {
                a
            },
        );
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(|a| a.into()).collect()
    }

    #[test]
    fn crates_of_crates_io_are_optimized_less_in_the_fuzz_build() {
        let nalgebra = args(&[
            "--crate-name",
            "nalgebra",
            "-C",
            "opt-level=3",
            "-C",
            "debuginfo=1",
            "--cap-lints",
            "allow",
            "--target",
            "x",
            "-Zsanitizer=address",
        ]);
        let got = coverage_args(nalgebra, "fmu_runtime".as_ref());
        assert_eq!(
            got,
            args(&[
                "--crate-name",
                "nalgebra",
                "-C",
                "opt-level=1",
                "-C",
                "debuginfo=0",
                "--cap-lints",
                "allow",
                "--target",
                "x",
            ])
        );
        let libm = args(&[
            "--crate-name",
            "libm",
            "-C",
            "opt-level=3",
            "--cap-lints",
            "allow",
            "--target",
            "x",
        ]);
        assert_eq!(coverage_args(libm.clone(), "fmu_runtime".as_ref()), libm);
        let ours = args(&[
            "--crate-name",
            "fmu_runtime",
            "-C",
            "opt-level=3",
            "--target",
            "x",
            "-Zsanitizer=address",
            "-Cpasses=sancov-module",
        ]);
        assert_eq!(coverage_args(ours.clone(), "fmu_runtime".as_ref()), ours);
    }
}
