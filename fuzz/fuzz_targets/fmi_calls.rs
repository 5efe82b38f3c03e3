//! libFuzzer target: each input is one call sequence of one model through one FMI API
//! (`fmu_fuzz::run`). A failed oracle panics, which libFuzzer reports as a crash with the input.
#![no_main]

use fmu_harness::sequence::Bytes;
use libfuzzer_sys::{fuzz_mutator, fuzz_target};

fuzz_target!(|data: &[u8]| {
    fmu_fuzz::run(&mut fmu_fuzz::Guided(Bytes::new(data)), "fuzz input");
});

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    fmu_fuzz::mutate(data, size, max_size, seed, libfuzzer_sys::fuzzer_mutate)
});
