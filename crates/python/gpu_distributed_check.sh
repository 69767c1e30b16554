#!/usr/bin/env bash
# rime.distributed on 2 GPUs with NCCL (issue 19). NOT YET RUN: written when no multi-GPU
# machine (kind nvidia-h200-x2) was available; docs/distributed.md says what it will check.
#
# Installs the wheel built on the build host (.wheel/, as gpu_check.sh; no Rust or network
# needed), then:
#   1. tests/test_distributed.py: the same cases as on CPU, now also on NCCL with one GPU per
#      rank and the sm120 engine (its 2-rank runs; the 4-rank ones are skipped with the reason
#      on 2 GPUs), against single-process rime on cuda:0 and the float64 reference, bitwise
#      determinism of the deterministic cases; the gloo runs too.
#   2. benches/distributed_scaling.py on 1 and on 2 GPUs (torchrun): time per step of the ring
#      forward and backward for S = 32k, 64k, 128k (B=1, H=8, D=128, bf16, causal, zigzag),
#      the compute and the messages alone, the share of the messages hidden behind compute,
#      and on 1 GPU rime.attention and PyTorch's scaled_dot_product_attention as references.
# Everything goes to OUT_DIR.
#
#   bash crates/python/gpu_distributed_check.sh OUT_DIR   (default: $OUT, else ./gpu-check-out)
#
# Exit status: pytest's (0: every test passed or was skipped with its reason).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-${OUT:-$root/gpu-check-out}}"
# shellcheck source=gpu_env.sh
source "$root/crates/python/gpu_env.sh"
nvidia-smi topo -m > "$out/topology.txt" 2>&1
"$py" -c 'import torch, torch.distributed as d; print("gpus", torch.cuda.device_count(), "nccl", d.is_nccl_available() and torch.cuda.nccl.version())' 2>&1 | tee -a "$out/summary.txt"

cd "$root/crates/python"
start=$(date +%s)
"$py" -m pytest tests/test_distributed.py -rs -v -p no:cacheprovider \
  --junitxml="$out/pytest_distributed.xml" > "$out/pytest_distributed.txt" 2>&1
status=$?
log "pytest tests/test_distributed.py exit $status in $(( $(date +%s) - start )) s: $(tail -n 1 "$out/pytest_distributed.txt")"
grep -E "^(FAILED|ERROR|SKIPPED)" "$out/pytest_distributed.txt" | head -50 >> "$out/summary.txt"

for n in 1 2; do
  start=$(date +%s)
  "$py" -m torch.distributed.run --standalone --nproc-per-node "$n" benches/distributed_scaling.py \
    --out "$out" > "$out/distributed_scaling_w$n.txt" 2>&1
  log "distributed_scaling on $n GPU(s) exit $? in $(( $(date +%s) - start )) s"
  grep -E "^S=" "$out/distributed_scaling_w$n.txt" >> "$out/summary.txt"
done
exit $status
