#!/usr/bin/env bash
# The steps run by hand on Y3's machine right after callY3.sh (as two `run` commands, 08:57 and
# 08:59-09:00 UTC): callY3.sh's FROST step had pointed at hd_main_1/cases.json, which its
# first attempt (with the held-out headdims_suite.json path) never wrote; FROST on hd_main_3's
# cases, rime again (hd_main_5), then ncu's times of FROST's kernels on the no-bias d192 row
# (ncu_frost: its first 60 launches, the peer's small correctness check; ncu_frost2: FROST's
# own kernels of the timed loop).
source docs/gpu-runs/2026-12-05-d256/lib.sh Y3
step frost_hd2 200 frost_peer $W/hd_main_3/cases.json $W/frost_hd.jsonl 200
turn hd 60 main bench --suite headdims
python3 -c "
import json;c=json.load(open('$W/hd_main_3/cases.json'));r=[x for x in c if x['d']==192 and x['bias']=='none' and not x['causal'] and not x['deterministic']];json.dump(r,open('$W/one.json','w'))"
step ncu_frost 150 env $FROST_PATH ncu --clock-control none --metrics gpu__time_duration.sum --launch-count 60 python3 .dev3/frost_peer_sink.py $W/one.json
step ncu_frost2 150 env $FROST_PATH ncu --clock-control none --metrics gpu__time_duration.sum -k regex:cudnn_kernel --launch-skip 12 --launch-count 12 python3 .dev3/frost_peer_sink.py $W/one.json
