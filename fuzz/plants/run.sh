#!/usr/bin/env bash
# Measures a planted bug against both fuzzers, side by side on one core each (docs/fuzzing.md):
#     fuzz/plants/run.sh [patch] [seconds]
# The patch is applied to a scratch worktree of HEAD (main never holds a plant); libFuzzer is
# built as `cargo xtask fuzz` builds it, less AddressSanitizer, the random fuzzer uninstrumented.
# The plant prints each stage when first reached, with the time since the fuzzer's first input.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
patch=$(realpath "${1:-$root/fuzz/plants/six-restores.patch}")
seconds=${2:-900}
tree=$root/target/plant-tree
out=$root/target/plant-run
git -C "$root" worktree remove --force "$tree" 2>/dev/null || true
git -C "$root" worktree add -q --detach "$tree" HEAD
git -C "$tree" apply "$patch"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$tree/target/fuzz}
flags=(-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4
  -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table
  -Cllvm-args=-sanitizer-coverage-trace-compares -Cllvm-args=-simplifycfg-branch-fold-threshold=0
  -Cllvm-args=-sanitizer-coverage-stack-depth "--cfg fuzzing" -Cdebug-assertions -Ccodegen-units=1)
RUSTFLAGS="${flags[*]}" RUSTC_BOOTSTRAP=1 cargo build --release --locked --bin fmi_calls \
  --target x86_64-unknown-linux-gnu --manifest-path "$tree/fuzz/Cargo.toml"
cargo build --release --locked --bin random_sequences --manifest-path "$tree/fuzz/Cargo.toml"
rm -rf "$out" && mkdir -p "$out/corpus" "$out/artifacts"
"$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release/fmi_calls" "$out/corpus" \
  "$root/fuzz/corpus/fmi_calls" "-max_total_time=$seconds" -max_len=65536 -len_control=0 \
  -timeout=10 -print_final_stats=1 "-artifact_prefix=$out/artifacts/" >"$out/libfuzzer.log" 2>&1 &
"$CARGO_TARGET_DIR/release/random_sequences" "$seconds" 1 >"$out/random.log" 2>&1 &
wait || true
grep -H PLANT "$out"/*.log || echo "no stage reached"
git -C "$root" worktree remove --force "$tree"
