//! The coverage-guided fuzzer's harness. Every component model is linked in (fmu-runtime's
//! feature `no-export`: no model writes C symbols, so they link side by side), and each
//! model's FMI 2.0 and FMI 3.0 functions are tables of the test importer (`fmu_harness::Api`,
//! `Api3`) whose entries call the runtime's generic C ABI, exactly what the exported symbols
//! call. An input is read as: which model, which API, then a call sequence of that API
//! (`fmu_harness::sequence`, with its oracles).

use fmu_harness::fmi3::Fmu3;
use fmu_harness::sequence::{fmi2_sequence, fmi3_sequence, Bytes, Choices, Rng, PROTOCOL_FEATURES};
use fmu_harness::Fmu;
use fmu_runtime::Model;
use model_description::ModelDescription;
use std::ffi::{c_char, CStr};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

/// Calls in one sequence at most; an input usually runs dry first.
pub const CALLS: usize = 400;

/// `pub fn table<M: Model>() -> Table`: one `extern "C"` function per entry of an FMI function
/// list, calling its namesake in the module `abi` for `M` (both named where it expands).
macro_rules! table {
    (($($pass:tt)*) $($symbol:ident $name:ident ($($arg:ident : $ty:ty),*) -> $ret:ty;)*) => {
        $(
            #[allow(non_snake_case, clippy::too_many_arguments)]
            unsafe extern "C" fn $symbol<M: Model>($($arg: $ty),*) -> $ret {
                abi::$name::<M>($($arg),*)
            }
        )*
        pub fn table<M: Model>() -> Table {
            Table { $($name: $symbol::<M>,)* }
        }
    };
}
pub(crate) use table;

mod fmi2 {
    use fmu_harness::Api as Table;
    use fmu_runtime::__export::ffi as abi;
    use fmu_runtime::Model;
    fmi_abi::fmi2_functions!(crate::table, fmi2);
}

mod fmi3 {
    use fmu_harness::fmi3::Api3 as Table;
    use fmu_runtime::__export::ffi3 as abi;
    use fmu_runtime::Model;
    fmi_abi::fmi3_functions!(crate::table, fmi3);
}

/// A text the runtime allocated, copied and freed.
unsafe fn text(p: *mut c_char) -> String {
    assert!(!p.is_null(), "the runtime wrote no description");
    let s = CStr::from_ptr(p).to_string_lossy().into_owned();
    fmu_runtime::__export::texts::free_string(p);
    s
}

/// Model `M` through both APIs.
fn load<M: Model>() -> (Fmu, Fmu3) {
    let stamp = c"2026-01-01T00:00:00Z".as_ptr();
    let (xml2, xml3) = unsafe {
        (
            text(fmu_runtime::__export::texts::model_description::<M>(stamp)),
            text(fmu_runtime::__export::texts::model_description3::<M>(stamp)),
        )
    };
    let md = ModelDescription::from_xml(&xml2).expect("the runtime's own description parses");
    assert!(
        fmu_runtime::testing::outputs_checked_by_fields::<M>(),
        "{}: the derive's sum of outputs does not match the variable table",
        M::NAME
    );
    (
        Fmu::in_process(md.clone(), fmi2::table::<M>()),
        Fmu3::in_process(md, xml3, fmi3::table::<M>()),
    )
}

/// Every component model, loaded once per process.
pub fn models() -> &'static [(Fmu, Fmu3)] {
    static MODELS: OnceLock<Vec<(Fmu, Fmu3)>> = OnceLock::new();
    MODELS.get_or_init(|| {
        vec![
            load::<gear::Gear>(),
            load::<lossy_gear::LossyGear>(),
            load::<crank_slider::CrankSlider>(),
            load::<cvt::Cvt>(),
            load::<variable_ratio_transmission::VariableRatioTransmission>(),
            load::<variable_ratio_coupling::VariableRatioCoupling>(),
            load::<fast_drivetrain::FastDrivetrain>(),
            load::<chain_drive::ChainDrive>(),
            // cargo xtask new adds a component above this line.
        ]
    })
}

/// One sequence: the first choice picks the model, the second the API.
pub fn run(choices: &mut impl Choices, label: &str) {
    let all = models();
    let (fmu, fmu3) = &all[choices.below(all.len() as u64) as usize];
    if choices.below(2) == 0 {
        fmi2_sequence(fmu, choices, CALLS, label);
    } else {
        fmi3_sequence(fmu3, choices, CALLS, label);
    }
}

/// The mutations: half add one call at the end of the input, so a sequence whose last call
/// reached new coverage goes one call further (a deep path grows a call at a time, from the
/// input that holds it); a quarter cut the input at the later of two random points and
/// continue it with a few fresh calls; a quarter are libFuzzer's own byte mutations
/// (`default`).
pub fn mutate(
    data: &mut [u8],
    size: usize,
    max_size: usize,
    seed: u32,
    default: fn(&mut [u8], usize, usize) -> usize,
) -> usize {
    let mut rng = Rng::seeded(u64::from(seed));
    let (from, fresh) = match rng.below(4) {
        0 => return default(data, size, max_size),
        1 => {
            let n = size as u64 + 1;
            (rng.below(n).max(rng.below(n)) as usize, 4 + rng.below(61))
        }
        // A call's value references and kind (3 bytes) and its first argument; the rest of
        // its arguments read as zeros.
        _ => (size, 3 + rng.below(3)),
    };
    let end = (from + fresh as usize).min(max_size);
    for b in &mut data[from..end] {
        *b = rng.draw() as u8;
    }
    end
}

/// libFuzzer's extra coverage: one counter per protocol feature of the sequences
/// (`fmu_harness::sequence::PROTOCOL_FEATURES`), cleared by libFuzzer before each input.
#[used]
#[link_section = "__libfuzzer_extra_counters"]
static PROTOCOL: [AtomicU8; PROTOCOL_FEATURES] = [const { AtomicU8::new(0) }; PROTOCOL_FEATURES];

/// A fuzzer's input as choices (`Bytes`), with the protocol features its calls reach counted
/// for libFuzzer.
pub struct Guided<'a>(pub Bytes<'a>);

impl Choices for Guided<'_> {
    fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }

    fn value(&mut self) -> f64 {
        self.0.value()
    }

    fn exhausted(&self) -> bool {
        self.0.exhausted()
    }

    fn reached(&mut self, feature: usize) {
        let c = &PROTOCOL[feature];
        c.store(
            c.load(Ordering::Relaxed).saturating_add(1),
            Ordering::Relaxed,
        );
    }
}

/// Choices from `inner`, written down as the fuzzer's input that makes the same choices
/// (`fmu_harness::sequence::Bytes`): a random sequence becomes an input the libFuzzer binary
/// can replay, so both fuzzers' coverage is read off one instrumented binary.
pub struct Recorder<C> {
    pub inner: C,
    pub bytes: Vec<u8>,
}

impl<C: Choices> Choices for Recorder<C> {
    fn below(&mut self, n: u64) -> u64 {
        let x = self.inner.below(n);
        if n <= 256 {
            self.bytes.push(x as u8);
        } else {
            self.bytes.extend_from_slice(&(x as u16).to_le_bytes());
        }
        x
    }

    fn value(&mut self) -> f64 {
        let x = self.inner.value();
        // Bytes::value: 0 NaN, 1 +inf, 2 -inf, 3 -1e300, 4 1e300, 5 zero, 6 -1, 7 raw bits.
        let special = [f64::INFINITY, f64::NEG_INFINITY, -1e300, 1e300, 0.0, -1.0];
        match special.iter().position(|s| s.to_bits() == x.to_bits()) {
            _ if x.is_nan() => self.bytes.push(0),
            Some(i) => self.bytes.push(i as u8 + 1),
            None => {
                self.bytes.push(7);
                self.bytes.extend_from_slice(&x.to_le_bytes());
            }
        }
        x
    }

    fn exhausted(&self) -> bool {
        self.inner.exhausted()
    }
}
