#!/usr/bin/env bash
# Device call Z3, right after Z2 on the same machine (carry .frostB, .dev3; records held out):
# FROST's part B, then ncu's full set on one timed launch of FROST's main kernel on the no-bias
# d192 row (the peer's correctness check and warm-up launches skipped), beside Z1's profiles of
# rime's kernels on the same row.
source docs/gpu-runs/2026-12-05-d256/lib.sh Z3
step frost_install_b 120 frost_b
python3 -c "
import json; json.dump([dict(b=4, hq=16, hk=16, sq=2048, skv=2048, d=192, dv=192, causal=False,
  bias='none', dtype='bf16', deterministic=False)], open('$W/one.json', 'w'))"
step ncu_frost 200 env $FROST_PATH ncu --clock-control none -k regex:sdpa_bwd_sm120 --launch-skip 3 \
  --launch-count 1 --set full -o $W/frost python3 .dev3/frost_peer_sink.py $W/one.json
step det_frost 60 ncu -i $W/frost.ncu-rep --page details --print-details all; rm -f $W/frost.ncu-rep
save; cat $W/times.txt; grep -E "Duration|Executed Instructions |Registers Per|Achieved Occ" $W/det_frost.txt | head
