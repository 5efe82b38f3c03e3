//! Transcendental functions with the same bits on every platform.
//!
//! `f64::sin` and friends call the platform's C library: glibc on Linux, msvcrt on Windows, and
//! they differ in the last digit. A model that used them would give a Windows user results a few
//! ulp off a Linux user's, growing over a run, and an FMU state moved between the two would not
//! continue as it would have. These come from the `libm` crate (Rust's port of musl's libm),
//! compiled into the FMU, so every platform computes the same numbers.

pub use libm::{acos, asin, atan2, cos, pow, sin, tanh};

/// `(sin x, cos x)`.
pub fn sin_cos(x: f64) -> (f64, f64) {
    libm::sincos(x)
}

/// `pow` for the whole binary, dependencies included: diffsol's BDF step-size controller raises
/// the error norm to a power (the runtime's own Runge-Kutta calls [`pow`] directly), and a last-digit difference there changes the step sizes and so the
/// results at the tolerance's level. `cargo xtask package` links every shipped binary with
/// `--wrap=pow`, which sends each call to the C library's `pow` here.
#[no_mangle]
pub extern "C" fn __wrap_pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}
