#!/usr/bin/env bash
# Device call C (2026-12-04): every route of every suite on rime_dq1 (this tree: the pipelined
# dQ GEMM), for the cost model's recalibration (as calls L1 / L3 of 2026-12-03 did for main):
# standard and thd pinned to atomic, two_kernel and relay, sinks and d256 to atomic and
# two_kernel.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk
W=/tmp/wc; mkdir -p $W
save() { tar -czf $OUT/callC.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; timeout 200 "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1
N=.device/rime_dq1
for s in d256 sinks; do for r in two_kernel atomic; do step ${s}_$r $N bench --suite $s --route $r --out $W/${s}_$r; done; done
for s in thd standard; do for r in two_kernel atomic relay; do step ${s}_$r $N bench --suite $s --route $r --out $W/${s}_$r; done; done
save
cat $W/times.txt
