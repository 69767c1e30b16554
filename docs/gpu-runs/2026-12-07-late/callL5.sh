#!/usr/bin/env bash
# Device call L5, right after L4 on the same machine (carry .frostA2, .dev3, .device with
# rime_main; records held out). FROST's parts A and B (frost_ab), then FROST / rime in one call
# on the rows FROST still wins or ties (issue 16): the headdims and standard suites as main,
# FROST (on main's cases.json), main, and the d256 suite as main, FROST. Not run.
source docs/gpu-runs/2026-12-05-d256/lib.sh L5
step frost_install 150 frost_ab
for s in headdims:hd:2 standard:std:2 d256:d256:1; do
  IFS=: read suite p n <<< "$s"
  turn $p 90 main bench --suite $suite
  step frost_$p 150 frost_peer $W/${p}_main_1/cases.json $W/frost_$p.jsonl 150
  if [ $n = 2 ]; then turn $p 90 main bench --suite $suite; fi
done
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt; wc -l $W/frost_*.jsonl
