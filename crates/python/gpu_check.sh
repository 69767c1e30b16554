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
mkdir -p "$out"
py="${PYTHON:-python3}"
site="$(mktemp -d /tmp/rime-site.XXXXXX)"
wheels="$root/.wheel"
log() { echo "== $*" | tee -a "$out/summary.txt"; }

log "$(date -u '+%Y-%m-%d %H:%M:%S UTC') $(uname -n)"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  "$py" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU")'
  ls -l "$wheels"; } > "$out/env.txt" 2>&1
cat "$out/env.txt" >> "$out/summary.txt"

# The rime wheel, and pytest / numpy only when this Python lacks them.
need=("$wheels"/rime-*.whl)
"$py" -c 'import pytest' 2>/dev/null || need+=("$wheels"/pytest-*.whl "$wheels"/pluggy-*.whl "$wheels"/iniconfig-*.whl "$wheels"/packaging-*.whl "$wheels"/pygments-*.whl)
"$py" -c 'import numpy' 2>/dev/null || need+=("$wheels"/numpy-*.whl)
if ! "$py" -m pip install --quiet --no-index --no-deps --target "$site" "${need[@]}" >"$out/install.txt" 2>&1; then
  # No pip: a wheel is a zip of the installed layout.
  for w in "${need[@]}"; do "$py" -m zipfile -e "$w" "$site" >>"$out/install.txt" 2>&1; done
fi
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
export RIME_KERNEL_CACHE="${RIME_KERNEL_CACHE:-$site/kernel-cache}"
"$py" -c 'import rime; print("rime", rime.__version__, rime.__file__); print("cuda_status", rime.cuda_status())' 2>&1 | tee -a "$out/summary.txt"

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
