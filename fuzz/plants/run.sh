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
# The tree's own xtask builds both fuzzers' binaries and prints their paths, libFuzzer's first;
# XTASK_BUILD_DIR, if set, holds the builds.
{ read -r fuzzer && read -r random; } < <(cd "$tree" && cargo xtask fuzz-build --no-asan)
rm -rf "$out" && mkdir -p "$out/corpus" "$out/artifacts"
"$fuzzer" "$out/corpus" \
  "$root/fuzz/corpus/fmi_calls" "-max_total_time=$seconds" -max_len=1024 -len_control=0 -use_counters=0 \
  -timeout=10 -print_final_stats=1 "-artifact_prefix=$out/artifacts/" >"$out/libfuzzer.log" 2>&1 &
"$random" "$seconds" 1 >"$out/random.log" 2>&1 &
wait || true
grep -H PLANT "$out"/*.log || echo "no stage reached"
git -C "$root" worktree remove --force "$tree"
