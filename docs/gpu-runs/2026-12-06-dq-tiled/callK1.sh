#!/usr/bin/env bash
# Device call K1 (carry .device with rime_tile): every route that runs each suite's rows, on
# rime_tile (the dQ accumulator in 8 x 8 tiles), for the cost model's refit: atomic, two_kernel
# and relay on the standard and thd suites, atomic and two_kernel on the sinks and d256 suites
# (the set calls Y1-Y2 of docs/gpu-runs/2026-12-05-addr timed).
source docs/gpu-runs/2026-12-05-d256/lib.sh K1
C=/tmp/rime_tile
for r in atomic two_kernel relay; do step standard_$r 150 $C bench --suite standard --route $r --out $W/standard_$r; done
for s in d256 sinks; do for r in two_kernel atomic; do step ${s}_$r 100 $C bench --suite $s --route $r --out $W/${s}_$r; done; done
for r in two_kernel atomic relay; do step thd_$r 60 $C bench --suite thd --route $r --out $W/thd_$r; done
save; cat $W/times.txt
