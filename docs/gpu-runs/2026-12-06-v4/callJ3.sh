#!/usr/bin/env bash
# Device call J3, right after J2 on the same machine (carry .frostB and .dev3): FROST's part B;
# the standard suite's no-bias rows and the sinks suite on J1's best and on main (order best,
# main, best), then FROST on the best one's cases.json files, all in this one call.
source docs/gpu-runs/2026-12-05-d256/lib.sh J3
step frost_install_b 120 frost_b
B=$(cat /tmp/best); echo "$B" > $W/best.txt
for b in $B main $B; do r=$(( $(ls $W | grep -c "^std_${b}_[0-9]*$") + 1 ))
  step std_${b}_$r 60 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_${b}_$r
  step sinks_${b}_$r 40 /tmp/rime_$b bench --suite sinks --out $W/sinks_${b}_$r
done
step frost_std 150 frost_peer $W/std_${B}_1/cases.json $W/frost_std.jsonl 150
step frost_sinks 70 frost_peer $W/sinks_${B}_1/cases.json $W/frost_sinks.jsonl 70
save; cat $W/times.txt $W/best.txt; wc -l $W/frost_*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
