#!/usr/bin/env bash
# Device call V2, right after V1 on the same machine (carry .frostB, .dev3, .device; records held
# out). FROST's part B; the padded head dims (headdims_suite.json: d32, d96, d160, d192, d200;
# b4 h16 s2048) on rime_main, FROST, rime_main; the thd suite on rime_main, the cuDNN frontend's
# ragged backward on the same cases (FROST's THD path: the frontend sends ragged graphs to
# cuDNN's backend), rime_main again.
source docs/gpu-runs/2026-12-05-d256/lib.sh V2
HD="--suites docs/gpu-runs/2026-12-07-day/headdims_suite.json --suite headdims"
step frost_install_b 120 frost_b
turn hd 60 main bench $HD
step frost_hd 200 frost_peer $W/hd_main_1/cases.json $W/frost_hd.jsonl 200
turn hd 60 main bench $HD
turn thd 60 main bench --suite thd
step cudnn_thd 150 env $FROST_PATH python3 benches/cudnn_fe_thd_bwd.py $W/thd_main_1/cases.json --check
turn thd 60 main bench --suite thd
save; cat $W/times.txt; wc -l $W/frost_*.jsonl; grep -h refused $W/frost_*.jsonl | head -3; grep -c '"ms"' $W/cudnn_thd.txt
