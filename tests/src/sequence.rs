//! Call sequences of the FMI 2.0 and FMI 3.0 APIs, every kind of call with values, drawn from
//! a source of choices: a seeded generator ([`Rng`], the abuse tests' replayable seeds) or the
//! bytes of a coverage-guided fuzzer's input ([`Bytes`], `fuzz/`). The oracles: every call
//! returns a status (never fmi2Fatal: a panic or a crash is a failure), within 10 s outside
//! valgrind; a call refused with Error changes no value a getter can see; after every
//! accepted step, every Real output reads OK and is finite.

use crate::fmi3::{Fmu3, Instance3, Kind};
use crate::state_bytes::{crafted, value};
use crate::{Fmu, Instance, DISCARD, ERROR, OK, WARNING};
use model_description::{Causality, ModelDescription, VariableType};
use std::ffi::c_int;
use std::ptr::null;

// The sources of choices and the sequences of each FMI version are in sequence/; the protocol
// coverage and the oracles they share are here.
mod choices;
mod fmi2;
mod fmi3;

pub use choices::{Bytes, Choices, Rng};
pub use fmi2::fmi2_sequence;
pub use fmi3::fmi3_sequence;

/// How many protocol features there are: API (2) x origin of the state restored last (3) x
/// whether a call was accepted since (2) x call kind (40) x accepted or not (2).
pub const PROTOCOL_FEATURES: usize = 2 * 3 * 2 * 40 * 2;

/// Where a sequence is in the FMI protocol, coarsely: which kind of FMU state it restored last
/// (none, one it got, one it deserialized) and how many calls that can change the instance
/// were accepted since. With each call's kind and outcome, this is what a guided fuzzer
/// counts as coverage of the protocol: the runtime's generic state machine is compiled into
/// each model, where the fuzzer does not instrument it.
#[derive(Default)]
struct Protocol {
    restored: usize,
    since: usize,
}

/// The origin of an FMU state: got from the instance, or deserialized.
const GOT: usize = 1;
const DESERIALIZED: usize = 2;

impl Protocol {
    /// The feature of call `kind` of `api` (0 FMI 2.0, 1 FMI 3.0), made here, and where it
    /// leaves the sequence (`restored`: the origin of the state a restore set; `reads`: the
    /// call changes nothing).
    fn call(
        &mut self,
        api: usize,
        kind: u64,
        ok: bool,
        restored: Option<usize>,
        reads: bool,
    ) -> usize {
        let f = (((api * 3 + self.restored) * 2 + self.since) * 40 + kind.min(39) as usize) * 2;
        match restored {
            Some(origin) if ok => {
                *self = Protocol {
                    restored: origin,
                    since: 0,
                }
            }
            _ if ok && !reads => self.since = 1,
            _ => {}
        }
        f + usize::from(ok)
    }
}

/// Set by `cargo xtask memcheck`, which runs the abuse tests under valgrind.
pub fn memcheck() -> bool {
    std::env::var_os("FMU_MEMCHECK").is_some()
}

/// The oracles of one call (`what`): an allowed status, never Fatal; a call refused with Error
/// changed no value a getter reads (`before`, and `after` it); no call takes 10 s (a hang),
/// outside valgrind, where everything is ~50 times slower.
fn judge(
    what: &str,
    status: c_int,
    before: &[(c_int, u64)],
    after: impl FnOnce() -> Vec<(c_int, u64)>,
    log: impl Fn() -> String,
    began: std::time::Instant,
) {
    assert!(
        [OK, WARNING, DISCARD, ERROR].contains(&status),
        "{what} returned {status}\n{}",
        log()
    );
    if status == ERROR {
        // A failed computation may move the instance to the Error state, where getters that
        // were refused work: judge the values readable before and after.
        let after = after();
        let changed: Vec<_> = (0..after.len())
            .filter(|&i| before[i].0 == OK && after[i].0 == OK && after[i] != before[i])
            .collect();
        // The log only for the message: joining it after every refused call would cost the
        // square of its length.
        if !changed.is_empty() {
            let log = log();
            let last: Vec<&str> = log.lines().rev().take(5).collect();
            panic!(
                "{what} returned Error and changed values {changed:?}: {:?} -> {:?}\n{}",
                changed.iter().map(|&i| before[i]).collect::<Vec<_>>(),
                changed.iter().map(|&i| after[i]).collect::<Vec<_>>(),
                last.join("\n")
            );
        }
    }
    assert!(
        memcheck() || began.elapsed().as_secs_f64() < 10.0,
        "{what} took {:?}",
        began.elapsed()
    );
}

/// Every Real output reads OK and is finite, after an accepted step.
fn outputs_finite(md: &ModelDescription, get: impl Fn(u32) -> (c_int, f64)) -> Result<(), String> {
    for v in &md.model_variables {
        if v.causality == Causality::Output && matches!(v.kind, VariableType::Real { .. }) {
            let (status, x) = get(v.value_reference);
            if status != OK || !x.is_finite() {
                return Err(format!("output {} = {x} (status {status})", v.name));
            }
        }
    }
    Ok(())
}

/// Every Real variable as a getter sees it: its status and bits. A rejected call must leave
/// every readable value unchanged.
fn observable(inst: &Instance) -> Vec<(c_int, u64)> {
    inst.fmu
        .md
        .model_variables
        .iter()
        .filter(|v| matches!(v.kind, VariableType::Real { .. }))
        .map(|v| {
            let mut x = [0.0];
            let status = inst.get_real(&[v.value_reference], &mut x);
            (status, x[0].to_bits())
        })
        .collect()
}

/// A Co-Simulation or a Model Exchange instance, as the fuzzer draws it.
fn fuzz_instance<'a>(fmu: &'a Fmu, rng: &mut impl Choices) -> Instance<'a> {
    if rng.below(2) == 0 {
        fmu.instantiate("fuzz")
    } else {
        fmu.instantiate_me("fuzz")
    }
}
