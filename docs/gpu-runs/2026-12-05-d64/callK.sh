#!/usr/bin/env bash
# Device call K (a fresh machine; carry .device): rime_db2 is rime_db with the sweep's new
# per-envelope case `causal-bcast-dbias-s200` (causal over more than one KV tile with a
# head-broadcast bias and dBias: the case two_kernel's dBias reduction skips rows in, which E's
# sweep lacked; same kernels as rime_db). Guards on it and on the full sweep's
# gqa32x8-causal-bias (also causal broadcast dBias over two KV tiles), memcheck on the new
# case, the determinism table.
source docs/gpu-runs/2026-12-05-d256/lib.sh K
C=/tmp/rime_db2
step guards_cbcast 120 $C selftest --small --guards --require-gpu --filter causal-bcast-dbias-s200
step guards_gqa 60 $C selftest --guards --require-gpu --filter gqa32x8-causal-bias
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step memcheck_cbcast 120 $CS --tool memcheck $C selftest --small --filter causal-bcast-dbias-s200
step det 60 $C selftest --determinism --small
save; cat $W/times.txt; tail -qn 1 $W/guards_*.txt; tail -n 3 $W/memcheck_cbcast.txt; tail -n 2 $W/det.txt
