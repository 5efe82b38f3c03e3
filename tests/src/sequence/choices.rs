//! Where a sequence's calls and values come from: a seeded generator or a fuzzer's input.

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
    /// The protocol feature (below [`PROTOCOL_FEATURES`](super::PROTOCOL_FEATURES)) a call just
    /// reached: a guided fuzzer counts it as coverage.
    fn reached(&mut self, _feature: usize) {}
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
