#!/usr/bin/env bash
# Device call U2, right after U1 on the same machine (carry .frostB, .dev3 and .device): FROST's
# part B; then head, FROST, head on the d256 suite and on headdims_suite.json (padded head dims
# 32, 96, 160, 192, 200); the thd suite on head and the cuDNN frontend 1.32 (FROST's wheel:
# FROST has no THD kernel, the frontend sends ragged graphs to cuDNN's backend) on its cases.
source docs/gpu-runs/2026-12-05-d256/lib.sh U2
HD="--suites docs/gpu-runs/2026-12-07-close/headdims_suite.json --suite headdims"
step frost_install_b 120 frost_b
turn d256 60 head bench --suite d256
step frost_d256 120 frost_peer $W/d256_head_1/cases.json $W/frost_d256.jsonl 120
turn d256 60 head bench --suite d256
turn hd 60 head bench $HD
step frost_hd 120 frost_peer $W/hd_head_1/cases.json $W/frost_hd.jsonl 120
turn hd 60 head bench $HD
turn thd 90 head bench --suite thd
step cudnn_thd 240 env $FROST_PATH python3 benches/cudnn_fe_thd_bwd.py $W/thd_head_1/cases.json --check
save; cat $W/times.txt; wc -l $W/frost_*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
