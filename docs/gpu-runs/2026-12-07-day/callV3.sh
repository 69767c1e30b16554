#!/usr/bin/env bash
# Device call V3, right after V2 on the same machine (FROST installed; carry .dev3, .device):
# the d256 and sinks suites on rime_main, FROST, rime_main (FROST / rime on the current kernels,
# T1's fix of the biased d256 atomic and relay builds included).
source docs/gpu-runs/2026-12-05-d256/lib.sh V3
turn d256 120 main bench --suite d256
step frost_d256 150 frost_peer $W/d256_main_1/cases.json $W/frost_d256.jsonl 150
turn d256 60 main bench --suite d256
turn sinks 90 main bench --suite sinks
step frost_sinks 120 frost_peer $W/sinks_main_1/cases.json $W/frost_sinks.jsonl 120
turn sinks 60 main bench --suite sinks
save; cat $W/times.txt; wc -l $W/frost_*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
