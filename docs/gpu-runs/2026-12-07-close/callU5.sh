#!/usr/bin/env bash
# Device call U5, right after U4 on the same machine (carry .frostB, .dev3 and .device): FROST's
# part B; FROST on the headdims cases, then rime_head and rime_cand again (U4 ran cand, head:
# order cand, head, FROST, head, cand). No d256 suite (the session's device time: its model
# rows run two_kernel, unchanged since N2's FROST comparison).
source docs/gpu-runs/2026-12-05-d256/lib.sh U5
HD="--suites docs/gpu-runs/2026-12-07-close/headdims_suite.json --suite headdims"
step frost_install_b 120 frost_b
step hd_cases 30 /tmp/rime_cand bench $HD --dry-run --out $W/hd_cases
step frost_hd 200 frost_peer $W/hd_cases/cases.json $W/frost_hd.jsonl 200
turn hd 60 head bench $HD
turn hd 60 cand bench $HD
save; cat $W/times.txt; wc -l $W/frost_*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
