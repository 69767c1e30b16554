#!/usr/bin/env bash
# Device call X2 (carry .device with rime_det = d7d837e, the determinism table's d32
# and d192 rows; records held out): those rows bitwise over 20 runs per route, full and small
# tables.
source docs/gpu-runs/2026-12-05-d256/lib.sh X2
step det_d32 90 /tmp/rime_det selftest --determinism --require-gpu --filter " d32 "
step det_d192 120 /tmp/rime_det selftest --determinism --require-gpu --filter " d192 "
step det_small_d32 45 /tmp/rime_det selftest --determinism --small --require-gpu --filter " d32 "
step det_small_d192 45 /tmp/rime_det selftest --determinism --small --require-gpu --filter " d192 "
save; cat $W/times.txt $W/sha256.txt; tail -n 4 $W/det_*.txt
