# Sourced by the GPU scripts (gpu_check.sh, gpu_distributed_check.sh): records the machine and
# installs the rime wheel built on the build host (.wheel/, carried with the checkout; no Rust,
# no network needed), and pytest / numpy only when this Python lacks them, into a temporary
# site on PYTHONPATH. Needs: root (the checkout), out (the output folder).
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
