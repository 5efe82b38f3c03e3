//! Transcendental functions with the same bits on every platform.
//!
//! `f64::sin` and friends call the platform's C library: glibc on Linux, msvcrt on Windows, and
//! they differ in the last digit. A model that used them would give a Windows user results a few
//! ulp off a Linux user's, growing over a run, and an FMU state moved between the two would not
//! continue as it would have. These are compiled into the FMU, so every platform computes the
//! same numbers: the `libm` crate (Rust's port of musl's libm), and musl's algorithm for sine
//! and cosine written out here for the angles models meet.

pub use libm::{acos, asin, atan2, pow, tanh};

/// `(sin x, cos x)`.
///
/// musl's polynomial kernels after a reduction by π/2 (Cody and Waite's, in up to three rounds
/// as cancellation requires) for |x| below 2^20 π/2; libm beyond. libm's reduction branches on
/// the size of the angle and is called out of line; this one is a single inlined path, with the
/// same bits (a test checks it against libm over all quadrants and magnitudes).
#[inline]
pub fn sin_cos(x: f64) -> (f64, f64) {
    let ix = high_word(x);
    if ix <= PI_4_HIGH {
        if ix < COS_TINY_HIGH {
            return (x, 1.0);
        }
        return (k_sin(x, 0.0, false), k_cos(x, 0.0));
    }
    if ix >= MEDIUM_HIGH {
        return libm::sincos(x);
    }
    let (n, y0, y1) = reduce(x, ix);
    let (s, c) = (k_sin(y0, y1, true), k_cos(y0, y1));
    match n & 3 {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    }
}

/// `sin x`, as [`sin_cos`].
#[inline]
pub fn sin(x: f64) -> f64 {
    let ix = high_word(x);
    if ix <= PI_4_HIGH {
        if ix < SIN_TINY_HIGH {
            return x;
        }
        return k_sin(x, 0.0, false);
    }
    if ix >= MEDIUM_HIGH {
        return libm::sin(x);
    }
    let (n, y0, y1) = reduce(x, ix);
    match n & 3 {
        0 => k_sin(y0, y1, true),
        1 => k_cos(y0, y1),
        2 => -k_sin(y0, y1, true),
        _ => -k_cos(y0, y1),
    }
}

/// `cos x`, as [`sin_cos`].
#[inline]
pub fn cos(x: f64) -> f64 {
    let ix = high_word(x);
    if ix <= PI_4_HIGH {
        if ix < COS_TINY_HIGH {
            return 1.0;
        }
        return k_cos(x, 0.0);
    }
    if ix >= MEDIUM_HIGH {
        return libm::cos(x);
    }
    let (n, y0, y1) = reduce(x, ix);
    match n & 3 {
        0 => k_cos(y0, y1),
        1 => -k_sin(y0, y1, true),
        2 => -k_cos(y0, y1),
        _ => k_sin(y0, y1, true),
    }
}

/// The upper 32 bits of |x|'s representation: its exponent and leading mantissa bits.
#[inline]
fn high_word(x: f64) -> u32 {
    ((x.to_bits() >> 32) as u32) & 0x7fff_ffff
}

/// |x| ≲ π/4: no reduction.
const PI_4_HIGH: u32 = 0x3fe9_21fb;
/// |x| < 2^-27 √2: cos x rounds to 1 (and sin x to x).
const COS_TINY_HIGH: u32 = 0x3e46_a09e;
/// |x| < 2^-26: sin x rounds to x.
const SIN_TINY_HIGH: u32 = 0x3e50_0000;
/// |x| ≳ 2^20 π/2 (or not finite): libm's reduction, exact for any size.
const MEDIUM_HIGH: u32 = 0x4139_21fb;

/// 2/π, and π/2 in three parts of 33 bits with their tails (musl's bit patterns): `n · PIO2_k` is exact for
/// |n| < 2^20.
const INV_PIO2: f64 = std::f64::consts::FRAC_2_PI;
const PIO2_1: f64 = f64::from_bits(0x3ff9_21fb_5440_0000); // 1.5707963267341256
const PIO2_1T: f64 = f64::from_bits(0x3dd0_b461_1a62_6331); // 6.077100506506192e-11
const PIO2_2: f64 = f64::from_bits(0x3dd0_b461_1a60_0000); // 6.077100506303966e-11
const PIO2_2T: f64 = f64::from_bits(0x3ba3_198a_2e03_7073); // 2.0222662487959506e-21
const PIO2_3: f64 = f64::from_bits(0x3ba3_198a_2e00_0000); // 2.0222662487111665e-21
const PIO2_3T: f64 = f64::from_bits(0x397b_839a_2520_49c1); // 8.4784276603689e-32
/// Adding and subtracting 1.5 · 2^52 rounds to an integer.
const TO_INT: f64 = 1.5 / f64::EPSILON;

/// `x = n π/2 + y0 + y1` with |y0 + y1| ≲ π/4, for 2^-1 π/2 ≲ |x| < 2^20 π/2 (`ix` its high
/// word). A second and third round run only where `x - n π/2` cancels enough bits to need them.
#[inline]
fn reduce(x: f64, ix: u32) -> (i32, f64, f64) {
    let f_n = x * INV_PIO2 + TO_INT - TO_INT;
    let n = f_n as i32;
    let mut r = x - f_n * PIO2_1;
    let mut w = f_n * PIO2_1T;
    let mut y0 = r - w;
    let exponent = |y: f64| ((y.to_bits() >> 52) & 0x7ff) as i32;
    let ex = (ix >> 20) as i32;
    // Each further round takes the next 33 bits of π/2, when the last left too few.
    for (part, tail, cancelled) in [(PIO2_2, PIO2_2T, 16), (PIO2_3, PIO2_3T, 49)] {
        if ex - exponent(y0) <= cancelled {
            break;
        }
        let t = r;
        w = f_n * part;
        r = t - w;
        w = f_n * tail - ((t - r) - w);
        y0 = r - w;
    }
    (n, y0, (r - y0) - w)
}

/// sin(x + y) on [-π/4, π/4], `y` the tail of `x` (used if `tail`): musl's `__sin`.
#[inline]
fn k_sin(x: f64, y: f64, tail: bool) -> f64 {
    const S1: f64 = f64::from_bits(0xbfc5_5555_5555_5549); // -0.16666666666666632
    const S2: f64 = f64::from_bits(0x3f81_1111_1110_f8a6); // 0.00833333333332249
    const S3: f64 = f64::from_bits(0xbf2a_01a0_19c1_61d5); // -0.0001984126982985795
    const S4: f64 = f64::from_bits(0x3ec7_1de3_57b1_fe7d); // 2.7557313707070068e-06
    const S5: f64 = f64::from_bits(0xbe5a_e5e6_8a2b_9ceb); // -2.5050760253406863e-08
    const S6: f64 = f64::from_bits(0x3de5_d93a_5acf_d57c); // 1.58969099521155e-10
    let z = x * x;
    let w = z * z;
    let r = S2 + z * (S3 + z * S4) + z * w * (S5 + z * S6);
    let v = z * x;
    if tail {
        x - ((z * (0.5 * y - v * r) - y) - v * S1)
    } else {
        x + v * (S1 + z * r)
    }
}

/// cos(x + y) on [-π/4, π/4], `y` the tail of `x`: musl's `__cos`.
#[inline]
fn k_cos(x: f64, y: f64) -> f64 {
    const C1: f64 = f64::from_bits(0x3fa5_5555_5555_554c); // 0.0416666666666666
    const C2: f64 = f64::from_bits(0xbf56_c16c_16c1_5177); // -0.001388888888887411
    const C3: f64 = f64::from_bits(0x3efa_01a0_19cb_1590); // 2.480158728947673e-05
    const C4: f64 = f64::from_bits(0xbe92_7e4f_809c_52ad); // -2.7557314351390663e-07
    const C5: f64 = f64::from_bits(0x3e21_ee9e_bdb4_b1c4); // 2.087572321298175e-09
    const C6: f64 = f64::from_bits(0xbda8_fae9_be88_38d4); // -1.1359647557788195e-11
    let z = x * x;
    let w = z * z;
    let r = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6));
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    w + (((1.0 - w) - hz) + (z * r - x * y))
}

/// `pow` for the whole binary, dependencies included: diffsol's BDF step-size controller raises
/// the error norm to a power (the runtime's own Runge-Kutta calls [`pow`] directly), and a
/// last-digit difference there changes the step sizes and so the results at the tolerance's
/// level. `cargo xtask package` links every shipped binary with `--wrap=pow` (macOS: `-alias`),
/// which sends each call to the C library's `pow` here.
#[no_mangle]
pub extern "C" fn __wrap_pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

/// `cbrt` for the whole binary: diffsol's Newton iteration takes cube roots. On Linux and
/// Windows the compiler's own builtins define `cbrt` (libm's code, as here); macOS binaries
/// would take libSystem's, so the darwin link binds `cbrt` to this (`-alias`, xtask's
/// darwin.rs).
#[no_mangle]
pub extern "C" fn __wrap_cbrt(x: f64) -> f64 {
    libm::cbrt(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reproducible stream of uniform numbers in [0, 1) (xorshift64*).
    fn uniform(seed: u64) -> impl FnMut() -> f64 {
        let mut s = seed;
        move || {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            (s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Angles of every size the reduction handles, and those where it cancels most: near the
    /// multiples of π/2.
    fn angles() -> Vec<f64> {
        let mut u = uniform(0x9e37_79b9_7f4a_7c15);
        let mut xs = Vec::new();
        for _ in 0..400_000 {
            // log-uniform magnitudes from 1e-10 to 3e6, both signs
            let magnitude = 10f64.powf(-10.0 + 16.5 * u());
            xs.push(if u() < 0.5 { magnitude } else { -magnitude });
        }
        for k in 1..20_000i64 {
            let near = k as f64 * std::f64::consts::FRAC_PI_2;
            for d in [-2i64, -1, 0, 1, 2] {
                xs.push(f64::from_bits((near.to_bits() as i64 + d) as u64));
                xs.push(-f64::from_bits((near.to_bits() as i64 + d) as u64));
            }
        }
        xs.extend([
            0.0, -0.0, 1e-300, 0.785, 2.356, 3.927, 5.497, 7.0, 1e7, 1e300,
        ]);
        xs
    }

    #[test]
    fn sine_and_cosine_are_libms_bit_for_bit() {
        // Bit for bit: results do not move by an ulp against the libm these replace, so FMU
        // results (and reference comparisons) stay what they were.
        for x in angles() {
            let (s, c) = sin_cos(x);
            let (ls, lc) = libm::sincos(x);
            for (what, ours, theirs) in [
                ("sin_cos", s, ls),
                ("sin_cos", c, lc),
                ("sin", sin(x), libm::sin(x)),
                ("cos", cos(x), libm::cos(x)),
            ] {
                assert_eq!(ours.to_bits(), theirs.to_bits(), "{what}({x:e})");
            }
        }
    }

    #[test]
    fn not_finite_angles_give_nan() {
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let (s, c) = sin_cos(x);
            assert!(s.is_nan() && c.is_nan() && sin(x).is_nan() && cos(x).is_nan());
        }
    }
}
