//! The random fuzzer the coverage-guided one is measured against: the same sequences drawn
//! from seeded generators instead of inputs, fresh seeds for a given time. With `--record DIR`
//! each sequence is also written as the libFuzzer input that replays it, so that the
//! instrumented binary reads off the coverage it reached (`fmi_calls -runs=0 DIR`), and so are
//! its prefixes of 32, 64, 128, ... bytes (an input's prefix replays the sequence's first calls):
//! libFuzzer reads a corpus shortest first and keeps an input only for coverage not yet seen, so
//! what a sequence reached early is kept as a short input, which its mutations can work on
//! (a byte mutation lands on the call that matters one time in the input's length).
//!
//!     random_sequences <seconds> [first seed] [--record DIR]

use fmu_fuzz::Recorder;
use fmu_harness::sequence::Rng;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seconds: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(60.0);
    let first: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let record = args
        .iter()
        .position(|a| a == "--record")
        .and_then(|i| args.get(i + 1));
    if let Some(dir) = record {
        std::fs::create_dir_all(dir).expect("the record directory");
    }
    let start = std::time::Instant::now();
    let mut seed = first;
    while start.elapsed().as_secs_f64() < seconds {
        let mut choices = Recorder {
            inner: Rng::seeded(seed),
            bytes: Vec::new(),
        };
        fmu_fuzz::run(&mut choices, &format!("seed {seed}"));
        if let Some(dir) = record {
            let bytes = &choices.bytes;
            let prefixes = (5..).map(|k| 1usize << k).take_while(|&n| n < bytes.len());
            for n in prefixes.chain([bytes.len()]) {
                std::fs::write(format!("{dir}/seed-{seed}-{n}"), &bytes[..n]).expect("record");
            }
        }
        seed += 1;
    }
    println!(
        "random_sequences: seeds {first} to {} in {:.1} s, no failure",
        seed - 1,
        start.elapsed().as_secs_f64()
    );
}
