#!/usr/bin/env bash
# The fuzz campaign of docs/reliability.md: each target in turn (one at a time, so that builds
# on the same machine still progress) for SECONDS_PER_TARGET (default 1800) at the lowest
# priority, one libFuzzer process (-jobs=1), working corpora outside the repository (seeded
# from fuzz/corpus/<target> and, for load_json, the fixture corpus), logs and final
# statistics under $WORK/<target>/. TARGETS picks targets (default: all three). Needs
# cargo-fuzz and a nightly toolchain (or RUSTC_BOOTSTRAP=1 with stable: set TOOLCHAIN=stable).
set -euo pipefail
fuzz="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$fuzz")"
seconds="${SECONDS_PER_TARGET:-1800}"
work="${WORK:-/tmp/rime-fuzz}"
toolchain="${TOOLCHAIN:-nightly}"
targets="${TARGETS:-load_json structured_graph safetensors_input}"
if [ "$toolchain" = stable ]; then export RUSTC_BOOTSTRAP=1; fi
# No sanitizer: graph and analyzer hold no unsafe code, and ASan made the structured target
# six times slower. Panics (debug assertions and overflow checks stay on) are the findings.
nice -n 19 cargo "+$toolchain" fuzz build -s none --fuzz-dir "$fuzz"
seeds_load_json="$root/tests/fixtures/valid $root/tests/fixtures/invalid $root/tests/fixtures/unsupported $root/tests/fixtures/cudnn $root/tests/hostile"
seeds_structured_graph=""
seeds_safetensors_input=""
for target in $targets; do
  mkdir -p "$work/$target/corpus"
  cp -n "$fuzz/corpus/$target/"* "$work/$target/corpus/" 2>/dev/null || true
  seeds="seeds_$target"
  (cd "$work/$target" && nice -n 19 cargo "+$toolchain" fuzz run -s none --fuzz-dir "$fuzz" "$target" \
     corpus ${!seeds} -- -jobs=1 -max_total_time="$seconds" -print_final_stats=1 \
     -artifact_prefix="$work/$target/" > "$work/$target/run.log" 2>&1) || true
  echo "== $target"
  grep -h -E "Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss|panicked|crash-" \
    "$work/$target/"*.log || true
  ls "$work/$target/" | grep -E "^(crash|timeout|oom)-" || echo "no crash, timeout or oom artifacts"
done
