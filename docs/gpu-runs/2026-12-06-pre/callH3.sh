#!/usr/bin/env bash
# Device call H3, right after H2 on the same machine (carry .frostB and .dev3): FROST's part B;
# the standard suite's no-bias rows and the sinks suite on rime_cg and rime_main (order cg,
# main, cg), then FROST on rime_cg's cases.json files, all in this one call.
source docs/gpu-runs/2026-12-05-d256/lib.sh H3
step frost_install_b 120 frost_b
for b in cg main cg; do r=$(( $(ls $W | grep -c "^std_${b}_") / 2 + 1 ))
  step std_${b}_$r 60 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_${b}_$r
  step sinks_${b}_$r 40 /tmp/rime_$b bench --suite sinks --out $W/sinks_${b}_$r
done
step frost_std 150 frost_peer $W/std_cg_1/cases.json $W/frost_std.jsonl 150
step frost_sinks 70 frost_peer $W/sinks_cg_1/cases.json $W/frost_sinks.jsonl 70
save; cat $W/times.txt; wc -l $W/frost_*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
