#!/usr/bin/env bash
# Device call Z6, right after Z5 (= Z2's steps) on the same machine (carry .frostB, .dev3;
# records held out): FROST's part B, then Z3's profile of FROST's main kernel on the no-bias
# d192 row with the per-opcode counts and the SASS source page (CSV) kept, as Z4 did for rime.
source docs/gpu-runs/2026-12-05-d256/lib.sh Z6
step frost_install_b 120 frost_b
python3 -c "
import json; json.dump([dict(b=4, hq=16, hk=16, sq=2048, skv=2048, d=192, dv=192, causal=False,
  bias='none', dtype='bf16', deterministic=False)], open('$W/one.json', 'w'))"
step ncu_frost 200 env $FROST_PATH ncu --clock-control none -k regex:sdpa_bwd_sm120 --launch-skip 3 \
  --launch-count 1 --set full -o $W/frost python3 .dev3/frost_peer_sink.py $W/one.json
step inst_frost 60 ncu -i $W/frost.ncu-rep --page details --section InstructionStats --print-metric-instances details
step src_frost 60 ncu -i $W/frost.ncu-rep --page source --csv --print-source sass; rm -f $W/frost.ncu-rep
save; cat $W/times.txt; wc -c $W/src_frost.txt
