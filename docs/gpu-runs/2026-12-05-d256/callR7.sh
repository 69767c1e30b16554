#!/usr/bin/env bash
# Device call R7, right after R3 on the same machine (its kernel cache warm): every route of every
# suite on rime_cand, for the cost model's recalibration (as call C of 2026-12-04 did): d256 and
# sinks pinned to atomic and two_kernel, thd and standard to two_kernel, atomic and relay. About
# 350 s.
source docs/gpu-runs/2026-12-05-d256/lib.sh R7
C=/tmp/rime_cand
for s in d256 sinks; do for r in two_kernel atomic; do step ${s}_$r 200 $C bench --suite $s --route $r --out $W/${s}_$r; done; done
for s in thd standard; do for r in two_kernel atomic relay; do step ${s}_$r 200 $C bench --suite $s --route $r --out $W/${s}_$r; done; done
save; cat $W/times.txt
