//! The fuzzer's own tests, apart from its library so that they link the library built once
//! (with every model's FMI functions in it) rather than compile it again as a test harness.

/// Over many seeds the mutator hands a quarter of the inputs to libFuzzer's mutations,
/// adds one call (3 to 5 bytes) to half, and cuts and continues the others with 4 to 64
/// fresh bytes, mostly late (the later of two cuts); the bytes before the change are kept,
/// and nothing goes past `max_size`.
#[test]
fn the_mutator_adds_calls_and_continues_inputs() {
    fn default(_: &mut [u8], size: usize, _: usize) -> usize {
        size + 1_000_000
    }
    let input: Vec<u8> = (0..1000).map(|i| (i % 251) as u8).collect();
    let (mut defaults, mut added, mut continued, mut late) = (0, 0, 0, 0);
    for seed in 0..4000 {
        let mut data = input.clone();
        data.resize(1100, 0);
        let end = fmu_fuzz::mutate(&mut data, 1000, 1100, seed, default);
        if end == 1_001_000 {
            defaults += 1;
            continue;
        }
        assert!(end <= 1100, "seed {seed}: {end} bytes");
        // The first byte changed: where a cut fell (a fresh byte may repeat the old one).
        let cut = (0..1000).find(|&i| data[i] != input[i]).unwrap_or(1000);
        if cut == 1000 && end <= 1005 {
            assert!(end >= 1003, "seed {seed}: {end} bytes");
            added += 1;
        } else {
            assert!(end > cut && end - cut <= 64, "seed {seed}: {cut}..{end}");
            continued += 1;
            late += usize::from(cut > 500);
        }
    }
    assert!(
        (900..1100).contains(&defaults),
        "{defaults} of 4000 to libFuzzer"
    );
    assert!(
        (1850..2150).contains(&added),
        "{added} of 4000 with a call added"
    );
    assert!(late * 10 > continued * 6, "{late} of {continued} cut late");
}

/// Every component crate under fmu/ is fuzzed, and nothing else.
#[test]
fn every_component_is_fuzzed() {
    let mut fuzzed: Vec<String> = fmu_fuzz::models()
        .iter()
        .map(|(fmu, _)| fmu.md.co_simulation.model_identifier.clone())
        .collect();
    let mut components: Vec<String> = fmu_harness::components()
        .unwrap()
        .into_iter()
        .map(|c| c.model)
        .collect();
    fuzzed.sort();
    components.sort();
    assert_eq!(fuzzed, components, "fuzz/src/lib.rs models() against fmu/");
}
