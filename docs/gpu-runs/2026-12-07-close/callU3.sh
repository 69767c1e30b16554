#!/usr/bin/env bash
# Device call U3, optional, right after U2 (carry .device; FROST's wheel, installed by U2, holds
# the cuDNN frontend 1.32): the thd suite on rime_cand and the cuDNN frontend's ragged backward
# (cuDNN's own Hopper kernels here: FROST has no THD kernel, the frontend sends ragged graphs to
# cuDNN's backend) on the same cases, then rime_cand again.
source docs/gpu-runs/2026-12-05-d256/lib.sh U3
turn thd 60 cand bench --suite thd
step cudnn_thd 240 env $FROST_PATH python3 benches/cudnn_fe_thd_bwd.py $W/thd_cand_1/cases.json --check
turn thd 60 cand bench --suite thd
save; cat $W/times.txt; grep -c '"ms"' $W/cudnn_thd.txt
