#!/usr/bin/env bash
# Device call L3, right after L2 on the same machine (carry FROST's part B and its peer script):
# FROST's part B; the standard suite's no-bias rows and the sinks suite on head, main (629d540)
# and v4 (J1's rime_v4, the same kernels as head but for the convert kernel's source layout),
# order head, main, v4, head; the d256 suite on head; then FROST on head's first cases.json of
# each suite, all in this one call.
source docs/gpu-runs/2026-12-05-d256/lib.sh L3
step frost_install_b 120 frost_b
for b in head main v4 head; do r=$(( $(ls $W | grep -c "^std_${b}_[0-9]*$") + 1 ))
  step std_${b}_$r 60 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_${b}_$r
  step sinks_${b}_$r 40 /tmp/rime_$b bench --suite sinks --out $W/sinks_${b}_$r
done
step d256_head_1 60 /tmp/rime_head bench --suite d256 --out $W/d256_head_1
step frost_std 150 frost_peer $W/std_head_1/cases.json $W/frost_std.jsonl 150
step frost_sinks 70 frost_peer $W/sinks_head_1/cases.json $W/frost_sinks.jsonl 70
step frost_d256 90 frost_peer $W/d256_head_1/cases.json $W/frost_d256.jsonl 90
save; cat $W/times.txt; wc -l $W/frost_*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
