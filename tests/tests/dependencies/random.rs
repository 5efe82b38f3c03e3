//! The probe's randomness: a deterministic generator and random values inside a variable's range.

use super::*;

/// A small deterministic generator (xorshift64*), so that a failure repeats.
pub(crate) struct Random(pub(crate) u64);

impl Random {
    /// Uniform in [-1, 1).
    pub(crate) fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
        bits as f64 / (1u64 << 52) as f64 - 1.0
    }
}
/// A random value near `base`, inside the variable's range: moved by up to `spread` of itself
/// (from zero by up to `spread`), an Integer to a random allowed neighbour.
pub(crate) fn random_value(
    md: &ModelDescription,
    index: usize,
    base: f64,
    spread: f64,
    rng: &mut Random,
) -> f64 {
    let (_, min, max) = range(md, index);
    if variable(md, index).integer {
        let (lo, hi) = (min.max(base - 1.0), max.min(base + 1.0));
        return (lo + ((rng.next() + 1.0) / 2.0 * (hi - lo + 1.0)).floor()).min(hi);
    }
    let value = if base == 0.0 {
        spread * rng.next()
    } else {
        base * (1.0 + spread * rng.next())
    };
    value.clamp(min, max)
}

/// An Integer anywhere in its range.
pub(crate) fn random_integer(md: &ModelDescription, index: usize, rng: &mut Random) -> f64 {
    let (_, min, max) = range(md, index);
    (min + ((rng.next() + 1.0) / 2.0 * (max - min + 1.0)).floor()).min(max)
}
