#!/usr/bin/env bash
# Device call U5, right after U4 on the same machine (carry .frostB, .dev3 and .device): FROST's
# part B; headdims_suite.json on rime_cand, rime_head, FROST, rime_head, rime_cand. No d256
# suite (the session's device time: its model rows run two_kernel, unchanged since N2's FROST
# comparison).
source docs/gpu-runs/2026-12-05-d256/lib.sh U5
HD="--suites docs/gpu-runs/2026-12-07-close/headdims_suite.json --suite headdims"
step frost_install_b 120 frost_b
turn hd 60 cand bench $HD
turn hd 60 head bench $HD
step frost_hd 200 frost_peer $W/hd_cand_1/cases.json $W/frost_hd.jsonl 200
turn hd 60 head bench $HD
turn hd 60 cand bench $HD
save; cat $W/times.txt; wc -l $W/frost_*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
