#!/usr/bin/env bash
# Device call V4, right after V3 on the same machine (FROST installed; carry .dev3, .device):
# the standard suite on rime_main (the model's own routes), FROST, rime_main.
source docs/gpu-runs/2026-12-05-d256/lib.sh V4
turn std 90 main bench --suite standard
step frost_std 240 frost_peer $W/std_main_1/cases.json $W/frost_std.jsonl 240
turn std 90 main bench --suite standard
save; cat $W/times.txt; wc -l $W/frost_*.jsonl
