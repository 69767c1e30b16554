#!/usr/bin/env bash
# The Python package on a GPU machine (issue 17): installs the wheel built on the build host
# (.wheel/, carried with the checkout; no Rust, no network needed), then runs the whole pytest
# suite (the GPU tests: gradients against PyTorch's float64 MATH backend, determinism,
# torch.compile, streams, CUDA errors; and the CPU tests), the host-overhead benchmark and the
# README's training example. Everything goes to OUT_DIR.
#
#   bash crates/python/gpu_check.sh OUT_DIR        (default: $OUT, else ./gpu-check-out)
#
# Exit status: pytest's (0: every test passed or was skipped with its reason).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-${OUT:-$root/gpu-check-out}}"
# shellcheck source=gpu_env.sh
source "$root/crates/python/gpu_env.sh"

cd "$root/crates/python"
start=$(date +%s)
"$py" -m pytest tests -rs -v -p no:cacheprovider --junitxml="$out/pytest.xml" > "$out/pytest.txt" 2>&1
status=$?
log "pytest exit $status in $(( $(date +%s) - start )) s: $(tail -n 1 "$out/pytest.txt")"
grep -E "^(FAILED|ERROR|SKIPPED)" "$out/pytest.txt" | head -50 >> "$out/summary.txt"

start=$(date +%s)
"$py" benches/host_overhead.py --device cuda --out "$out" > "$out/host_overhead.txt" 2>&1
log "host_overhead exit $? in $(( $(date +%s) - start )) s"
cat "$out/host_overhead.txt" >> "$out/summary.txt"

"$py" examples/train.py --steps 50 > "$out/train.txt" 2>&1
log "train.py exit $?: $(tail -n 1 "$out/train.txt")"
exit $status
