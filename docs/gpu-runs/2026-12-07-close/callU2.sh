#!/usr/bin/env bash
# Device call U2, right after U1 on the same machine (carry .frostB, .dev3 and .device): FROST's
# part B; headdims_suite.json (padded head dims 32, 96, 160, 192, 200; 40 rows) on rime_cand
# (two_kernel allowed), rime_head (atomic / relay for padded dims) and FROST, order cand, head,
# FROST, head, cand; the d256 suite on cand and FROST (cand, FROST, cand; cand's d256 rows are
# head's: RTE002 never applied to exact dims).
source docs/gpu-runs/2026-12-05-d256/lib.sh U2
HD="--suites docs/gpu-runs/2026-12-07-close/headdims_suite.json --suite headdims"
step frost_install_b 120 frost_b
turn hd 60 cand bench $HD
turn hd 60 head bench $HD
step frost_hd 200 frost_peer $W/hd_cand_1/cases.json $W/frost_hd.jsonl 200
turn hd 60 head bench $HD
turn hd 60 cand bench $HD
turn d256 60 cand bench --suite d256
step frost_d256 120 frost_peer $W/d256_cand_1/cases.json $W/frost_d256.jsonl 120
turn d256 60 cand bench --suite d256
save; cat $W/times.txt; wc -l $W/frost_*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
