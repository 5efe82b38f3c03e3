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

/// Where the calls of a sequence and their values come from.
pub trait Choices {
    /// A number below `n` (0 when `n` is 0).
    fn below(&mut self, n: u64) -> u64;
    /// A value for an input, a parameter or a state: NaN, infinite, huge, zero or ordinary.
    fn value(&mut self) -> f64;
    /// Whether the source has run dry: a fuzzer's input ends.
    fn exhausted(&self) -> bool {
        false
    }
    /// The protocol feature (below [`PROTOCOL_FEATURES`]) a call just reached: a guided
    /// fuzzer counts it as coverage.
    fn reached(&mut self, _feature: usize) {}
}

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

/// A small deterministic generator, so that a failing sequence can be replayed.
pub struct Rng(pub u64);

impl Rng {
    pub fn draw(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// The generator of sequence `seed`.
    pub fn seeded(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E3779B97F4A7C15) | 1)
    }
}

impl Choices for Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.draw() % n.max(1)
    }

    fn value(&mut self) -> f64 {
        match self.below(10) {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => -1e300,
            3 => 0.0,
            4 => -1.0,
            _ => (self.below(2000) as f64 - 1000.0) / 100.0,
        }
    }
}

/// A fuzzer's input read as choices: one byte per choice below 256, two below 65536, eight
/// for a raw value; zeros once it runs dry.
pub struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Bytes<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Bytes { data, at: 0 }
    }

    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0; N];
        for b in out.iter_mut() {
            if let Some(&x) = self.data.get(self.at) {
                *b = x;
            }
            self.at += 1;
        }
        out
    }
}

impl Choices for Bytes<'_> {
    fn below(&mut self, n: u64) -> u64 {
        let x = if n <= 256 {
            u64::from(self.take::<1>()[0])
        } else {
            u64::from(u16::from_le_bytes(self.take::<2>()))
        };
        x % n.max(1)
    }

    fn value(&mut self) -> f64 {
        match self.below(16) {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            3 => -1e300,
            4 => 1e300,
            5 => 0.0,
            6 => -1.0,
            7 => f64::from_le_bytes(self.take::<8>()),
            _ => (self.below(20001) as f64 - 10000.0) / 1000.0,
        }
    }

    fn exhausted(&self) -> bool {
        self.at >= self.data.len()
    }
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

/// A sequence of up to `calls` calls of every kind of the FMI 2.0 CS and ME APIs, on CS and ME
/// instances, with values and value references from `rng`; panics with `label` and the log
/// where an oracle fails.
pub fn fmi2_sequence(fmu: &Fmu, rng: &mut impl Choices, calls: usize, label: &str) {
    let name = &fmu.md.model_name;
    let n_vars = fmu.md.model_variables.len() as u64;
    let mut inst = fuzz_instance(fmu, rng);
    let n_states = fmu.states();
    let n_indicators = fmu.md.number_of_event_indicators;
    let mut t = 0.0;
    let mut states = Vec::new();
    let mut origins = Vec::new();
    let mut protocol = Protocol::default();
    let categories = [
        c"logEvents".as_ptr(),
        c"logStatusError".as_ptr(),
        c"bogus".as_ptr(),
    ];
    let text = c"text".as_ptr();
    for _ in 0..calls {
        if rng.exhausted() {
            break;
        }
        let began = std::time::Instant::now();
        let before = observable(&inst);
        let vrs = [rng.below(n_vars + 2) as u32, rng.below(n_vars + 2) as u32];
        let c = inst.c;
        let api = &fmu.api;
        let kind = rng.below(37);
        let mut restored = None;
        let status = match kind {
            0 => inst.setup_experiment(Some(1e-6), 0.0, None),
            1 => inst.enter_initialization_mode(),
            2 => inst.exit_initialization_mode(),
            3..=5 => {
                let h = [1e-3, 1e-2, 0.1, -1.0, 0.0][rng.below(5) as usize];
                // Now and then a communication point that does not match.
                let at = if rng.below(8) == 0 { t + 0.5 } else { t };
                let s = inst.do_step(at, h);
                if s == OK {
                    t += h;
                    let finite = outputs_finite(&fmu.md, |vr| {
                        let mut x = [0.0];
                        (inst.get_real(&[vr], &mut x), x[0])
                    });
                    if let Err(e) = finite {
                        panic!(
                            "{name} {label}: after an accepted step, {e}\n{}",
                            inst.log_text()
                        );
                    }
                }
                s
            }
            6 | 7 => {
                let vr = rng.below(n_vars + 2) as u32;
                inst.set_real(&[vr], &[rng.value()])
            }
            8 => {
                let mut v = [0.0; 3];
                let vrs = [0, 1, rng.below(n_vars + 2) as u32];
                inst.get_real(&vrs, &mut v)
            }
            9 => inst.reset(),
            10 => inst.terminate(),
            11 => {
                let (s, st) = inst.get_state();
                if s == OK {
                    states.push(st);
                    origins.push(GOT);
                }
                s
            }
            12 => match states.pop() {
                Some(st) => {
                    let s = inst.set_state(&st);
                    restored = origins.pop();
                    inst.free_state(st);
                    s
                }
                None => OK,
            },
            13 => {
                let (vr, value) = (rng.below(n_vars + 2) as u32, rng.below(40) as i32 - 20);
                unsafe { (fmu.api.set_integer)(inst.c, &vr, 1, &value) }
            }
            14 => match states.last() {
                // A serialized state with one random byte changed, cut short, or with one
                // value changed and its checksum made right (crafted).
                Some(st) => match inst.serialize(st) {
                    Ok(mut bytes) => {
                        let i = rng.below(bytes.len() as u64) as usize;
                        match rng.below(3) {
                            0 => bytes[i] ^= 1 << rng.below(8),
                            1 => bytes.truncate(i),
                            _ => {
                                let vr = rng.below(n_vars) as u32;
                                let x = match rng.below(3) {
                                    0 => rng.value(),
                                    1 => value(&bytes, vr) + rng.below(3) as f64 - 1.0,
                                    _ => value(&bytes, vr) * 10.0,
                                };
                                bytes = crafted(&bytes, &[(vr, x)]);
                            }
                        }
                        let (s, st) = inst.deserialize(&bytes);
                        if s == OK {
                            states.push(st);
                            origins.push(DESERIALIZED);
                        }
                        s
                    }
                    Err(s) => s,
                },
                None => OK,
            },
            15 | 16 => {
                let vr = rng.below(n_vars) as u32;
                inst.set_input_derivatives(&[vr], &[1], &[rng.value()])
            }
            17 => {
                let mut v = [0; 2];
                unsafe { (api.get_integer)(c, vrs.as_ptr(), 2, v.as_mut_ptr()) }
            }
            18 => {
                let mut v = [0; 2];
                unsafe { (api.get_boolean)(c, vrs.as_ptr(), 2, v.as_mut_ptr()) }
            }
            19 => {
                let mut v = [null(); 2];
                unsafe { (api.get_string)(c, vrs.as_ptr(), 2, v.as_mut_ptr()) }
            }
            20 => {
                let v = [rng.below(2) as c_int];
                unsafe { (api.set_boolean)(c, vrs.as_ptr(), 1, v.as_ptr()) }
            }
            21 => unsafe { (api.set_string)(c, vrs.as_ptr(), 1, &text) },
            22 => {
                let n = rng.below(4) as usize;
                let on = rng.below(2) as c_int;
                unsafe { (api.set_debug_logging)(c, on, n.min(3), categories.as_ptr()) }
            }
            23 => {
                // fmi2DoStepStatus, fmi2PendingStatus, fmi2LastSuccessfulTime, fmi2Terminated.
                let kind = rng.below(4) as c_int;
                let (mut i, mut x, mut p) = (0, 0.0, null());
                match rng.below(5) {
                    0 => unsafe { (api.get_status)(c, kind, &mut i) },
                    1 => unsafe { (api.get_real_status)(c, kind, &mut x) },
                    2 => unsafe { (api.get_integer_status)(c, kind, &mut i) },
                    3 => unsafe { (api.get_boolean_status)(c, kind, &mut i) },
                    _ => unsafe { (api.get_string_status)(c, kind, &mut p) },
                }
            }
            24 => unsafe { (api.cancel_step)(c) },
            25 => {
                let (seed, mut out) = ([1.0], [0.0]);
                unsafe {
                    (api.get_directional_derivative)(
                        c,
                        vrs.as_ptr(),
                        1,
                        vrs[1..].as_ptr(),
                        1,
                        seed.as_ptr(),
                        out.as_mut_ptr(),
                    )
                }
            }
            26 => {
                let (order, mut out) = ([1 + rng.below(2) as c_int], [0.0]);
                unsafe {
                    (api.get_real_output_derivatives)(
                        c,
                        vrs.as_ptr(),
                        1,
                        order.as_ptr(),
                        out.as_mut_ptr(),
                    )
                }
            }
            // Model Exchange calls (refused on a CS instance).
            27 => {
                let time = [t + 1e-3, t, f64::NAN, -1.0][rng.below(4) as usize];
                inst.set_time(time)
            }
            28 | 29 => {
                // The current states moved a little, now and then a wrong length or a NaN.
                let (_, mut x) = inst.continuous_states();
                for v in x.iter_mut() {
                    *v += 1e-3 * rng.value().clamp(-1.0, 1.0);
                }
                match rng.below(6) {
                    0 => x.push(0.0),
                    1 if !x.is_empty() => x[0] = f64::NAN,
                    _ => {}
                }
                inst.set_continuous_states(&x)
            }
            30 => {
                // A getter of states, derivatives, indicators or nominals, sometimes too short.
                let which = rng.below(4);
                let n = if which == 2 { n_indicators } else { n_states };
                let n = n.saturating_sub(rng.below(2) as usize);
                let mut v = vec![0.0; n];
                let f = [
                    api.get_continuous_states,
                    api.get_derivatives,
                    api.get_event_indicators,
                    api.get_nominals_of_continuous_states,
                ][which as usize];
                unsafe { f(c, v.as_mut_ptr(), n) }
            }
            31 => inst.enter_event_mode(),
            32 | 33 => {
                if rng.below(8) == 0 {
                    unsafe { (api.new_discrete_states)(c, std::ptr::null_mut()) }
                } else {
                    inst.new_discrete_states().0
                }
            }
            34 => inst.enter_continuous_time_mode(),
            35 => inst.completed_integrator_step().0,
            _ => {
                // Free the instance mid-sequence (its states first) and go on with a new one.
                for st in states.drain(..) {
                    inst.free_state(st);
                }
                origins.clear();
                protocol = Protocol::default();
                inst = fuzz_instance(fmu, rng);
                t = 0.0;
                continue;
            }
        };
        let what = format!("{name} {label}: call kind {kind}");
        judge(
            &what,
            status,
            &before,
            || observable(&inst),
            || inst.log_text(),
            began,
        );
        let reads = [8, 11, 14, 17, 18, 19, 22, 23, 25, 26, 30].contains(&kind);
        rng.reached(protocol.call(0, kind, status == OK, restored, reads));
    }
    for st in states {
        inst.free_state(st);
    }
}

/// A sequence of up to `calls` FMI 3.0 calls of every kind, on a Model Exchange or a
/// Co-Simulation instance (with or without Event Mode and early return), with values from
/// `rng`; panics with `label` and the log where an oracle fails.
pub fn fmi3_sequence(fmu3: &Fmu3, rng: &mut impl Choices, calls: usize, label: &str) {
    let md = &fmu3.md;
    let name = &md.model_name;
    let n_vars = md.model_variables.len() as u64;
    let n_states = md.model_structure.derivatives.len();
    let n_indicators = md.number_of_event_indicators;
    let reals: Vec<u32> = md
        .model_variables
        .iter()
        .filter(|v| matches!(v.kind, model_description::VariableType::Real { .. }))
        .map(|v| v.value_reference)
        .collect();
    let kind = match rng.below(3) {
        0 => Kind::ModelExchange,
        1 => Kind::CoSimulation {
            event_mode: true,
            early_return: true,
        },
        _ => Kind::CoSimulation {
            event_mode: false,
            early_return: rng.below(2) == 0,
        },
    };
    let inst = fmu3.instantiate(kind).unwrap();
    if rng.below(2) == 0 {
        *inst.env.early_at.lock().unwrap() = Some((rng.below(20) as usize, None));
    }
    let api = &fmu3.api;
    let c = inst.c;
    let mut t = 0.0;
    let mut states = Vec::new();
    let mut origins = Vec::new();
    let mut protocol = Protocol::default();
    let observe = |inst: &Instance3| {
        reals
            .iter()
            .map(|vr| {
                let (s, v) = inst.get(&[*vr]);
                (s, v[0].to_bits())
            })
            .collect::<Vec<_>>()
    };
    for _ in 0..calls {
        if rng.exhausted() {
            break;
        }
        let began = std::time::Instant::now();
        let before = observe(&inst);
        let kind = rng.below(24);
        let mut restored = None;
        let status = unsafe {
            match kind {
                0 => inst.enter_initialization_mode(Some(1e-6), 0.0, 10.0),
                1 => inst.exit_initialization_mode(),
                2..=4 => {
                    let h = [1e-3, 1e-2, 0.1, -1.0, 0.0][rng.below(5) as usize];
                    let at = if rng.below(8) == 0 { t + 0.5 } else { t };
                    let step = inst.do_step(at, h);
                    if step.status == OK {
                        t = step.last_successful_time;
                        let finite = outputs_finite(md, |vr| {
                            let (s, v) = inst.get(&[vr]);
                            (s, v[0])
                        });
                        if let Err(e) = finite {
                            panic!(
                                "{name} {label}: after an accepted step, {e}\n{}",
                                inst.log_text()
                            );
                        }
                    }
                    step.status
                }
                5 | 6 => inst.set_vr(rng.below(n_vars + 3) as u32, rng.value()),
                7 => inst.get(&[rng.below(n_vars + 3) as u32, 0]).0,
                8 => {
                    t = 0.0;
                    (api.reset)(c)
                }
                9 => (api.terminate)(c),
                10 => {
                    let (s, st) = inst.get_state();
                    if s == OK {
                        states.push(st);
                        origins.push(GOT);
                    }
                    s
                }
                11 => match states.pop() {
                    Some(st) => {
                        let s = inst.set_state(&st);
                        restored = origins.pop();
                        let (got, now) = inst.get(&[n_vars as u32]);
                        if s == OK && got == OK {
                            t = now[0];
                        }
                        inst.free_state(st);
                        s
                    }
                    None => OK,
                },
                12 => match states.last() {
                    Some(st) => match inst.serialize(st) {
                        Ok(mut bytes) => {
                            let i = rng.below(bytes.len() as u64) as usize;
                            match rng.below(3) {
                                0 => bytes[i] ^= 1 << rng.below(8),
                                1 => bytes.truncate(i),
                                _ => {
                                    let vr = rng.below(n_vars) as u32;
                                    bytes = crafted(&bytes, &[(vr, rng.value())]);
                                }
                            }
                            let (s, st) = inst.deserialize(&bytes);
                            if s == OK {
                                states.push(st);
                                origins.push(DESERIALIZED);
                            }
                            s
                        }
                        Err(s) => s,
                    },
                    None => OK,
                },
                13 => inst.enter_event_mode(),
                14 => inst.update_discrete_states().0,
                15 => inst.enter_step_mode(),
                16 => inst.enter_continuous_time_mode(),
                17 => inst.set_time(t + rng.below(3) as f64 * 1e-3),
                18 => {
                    let x: Vec<f64> = (0..=n_states).map(|_| rng.value()).collect();
                    let n = if rng.below(4) == 0 {
                        n_states + 1
                    } else {
                        n_states
                    };
                    (api.set_continuous_states)(c, x.as_ptr(), n)
                }
                19 => {
                    let mut v = vec![0.0; n_states.max(n_indicators) + 1];
                    let n = [n_states, n_indicators, 1][rng.below(3) as usize];
                    match rng.below(4) {
                        0 => (api.get_continuous_state_derivatives)(c, v.as_mut_ptr(), n),
                        1 => (api.get_event_indicators)(c, v.as_mut_ptr(), n),
                        2 => (api.get_continuous_states)(c, v.as_mut_ptr(), n),
                        _ => (api.get_nominals_of_continuous_states)(c, v.as_mut_ptr(), n),
                    }
                }
                20 => {
                    let (mut a, mut b) = (false, false);
                    (api.completed_integrator_step)(c, true, &mut a, &mut b)
                }
                21 => {
                    let (vr, x) = (rng.below(n_vars + 2) as u32, rng.below(40) as i32 - 20);
                    (api.set_int32)(c, &vr, 1, &x, 1)
                }
                22 => {
                    let mut v = [0.0];
                    let vr = rng.below(n_vars) as u32;
                    match rng.below(3) {
                        0 => (api.get_output_derivatives)(c, &vr, 1, &1, v.as_mut_ptr(), 1),
                        // Any variable by any other (some beyond the table), nSeed sometimes
                        // not nKnowns: refused unless the mode has them as unknown and known.
                        kind => {
                            let known = rng.below(n_vars + 2) as u32;
                            let n_seed = rng.below(2) as usize;
                            let f = if kind == 1 {
                                api.get_directional_derivative
                            } else {
                                api.get_adjoint_derivative
                            };
                            f(c, &vr, 1, &known, 1, &1.0, n_seed, v.as_mut_ptr(), 1)
                        }
                    }
                }
                _ => {
                    let on = rng.below(2) == 0;
                    let categories = [c"logEvents".as_ptr(), c"bogus".as_ptr()];
                    (api.set_debug_logging)(c, on, rng.below(3) as usize, categories.as_ptr())
                }
            }
        };
        let what = format!("{name} {label}: call kind {kind}");
        judge(
            &what,
            status,
            &before,
            || observe(&inst),
            || inst.log_text(),
            began,
        );
        let reads = [7, 10, 12, 19, 22, 23].contains(&kind);
        rng.reached(protocol.call(1, kind, status == OK, restored, reads));
    }
    for st in states {
        inst.free_state(st);
    }
}
