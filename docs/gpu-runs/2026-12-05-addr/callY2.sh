#!/usr/bin/env bash
# Device call Y2, right after Y1 (carry .device): the other suites on every route R7 timed (d256
# and sinks on atomic and two_kernel, thd on atomic, two_kernel and relay), then the standard
# suite's atomic and two_kernel runs again for the run-to-run spread.
source docs/gpu-runs/2026-12-05-d256/lib.sh Y2
C=/tmp/rime_main
for s in d256 sinks; do for r in two_kernel atomic; do step ${s}_$r 200 $C bench --suite $s --route $r --out $W/${s}_$r; done; done
for r in two_kernel atomic relay; do step thd_$r 200 $C bench --suite thd --route $r --out $W/thd_$r; done
for r in atomic two_kernel; do step standard_${r}_r 150 $C bench --suite standard --route $r --filter "bias=none" --out $W/standard_${r}_r; done
save; cat $W/times.txt
