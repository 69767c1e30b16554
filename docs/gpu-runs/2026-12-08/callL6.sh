#!/usr/bin/env bash
# Device call L6, after L5 on the same machine (FROST installed there; carry .dev3, .device).
# The standard suite as main, FROST, main, and the sinks suite as main, FROST. L7 (no FROST)
# runs the padding fix's checks.
source docs/gpu-runs/2026-12-05-d256/lib.sh L6
test -d /tmp/frost-site || echo "FROST is not installed on this machine (L5 ran elsewhere)" >> $W/times.txt
turn std 120 main bench --suite standard
step frost_std 150 frost_peer $W/std_main_1/cases.json $W/frost_std.jsonl 150
turn std 100 main bench --suite standard
turn sinks 90 main bench --suite sinks
step frost_sinks 120 frost_peer $W/sinks_main_1/cases.json $W/frost_sinks.jsonl 120
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt; wc -l $W/frost_*.jsonl
