#!/usr/bin/env bash
# Device call Y1 (2026-12-05 late; carry .device): the cost model's inputs again after the
# instruction cut (X1-X3) and the convert change (V): rime_main (main at 3ede05e) on every
# route of the standard suite (as call R7 of ../2026-12-05-d256 did for the model's last fit).
source docs/gpu-runs/2026-12-05-d256/lib.sh Y1
C=/tmp/rime_main
for r in atomic two_kernel relay; do step standard_$r 200 $C bench --suite standard --route $r --out $W/standard_$r; done
save; cat $W/times.txt
