#!/usr/bin/env bash
# Device call L5, right after L4 on the same machine (carry .frostA2, .dev3, .device with
# rime_main = 86344af and rime_fix, the padding fix of ../2026-12-07-padding/; records held
# out). FROST's parts A and B (frost_ab), then FROST / rime in one call on the rows FROST still
# wins or ties (issue 16): the headdims and standard suites as main, FROST (on main's
# cases.json), fix (so the fix's A/B against main has FROST between; call P1 times the
# standard suite again, fix then main), and the d256 suite as main, FROST.
source docs/gpu-runs/2026-12-05-d256/lib.sh L5
step frost_install 150 frost_ab
for p in hd std; do
  suite=headdims; [ $p = std ] && suite=standard
  turn $p 90 main bench --suite $suite
  step frost_$p 150 frost_peer $W/${p}_main_1/cases.json $W/frost_$p.jsonl 150
  turn $p 90 fix bench --suite $suite
done
turn d256 60 main bench --suite d256
step frost_d256 100 frost_peer $W/d256_main_1/cases.json $W/frost_d256.jsonl 100
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt; wc -l $W/frost_*.jsonl
