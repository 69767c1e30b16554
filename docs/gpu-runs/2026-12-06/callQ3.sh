#!/usr/bin/env bash
# Device call Q3, right after Q2 on the same machine (carry .device, .frostB and .dev3: FROST's
# peer script with the sink): FROST's part B; the suites again in the order cand, base (so that
# the A/B runs base, cand, cand, base over Q2 and Q3); then FROST on Q2's standard and sinks
# cases.json, read back from Q2's work folder on this machine.
source docs/gpu-runs/2026-12-05-d256/lib.sh Q3
FP="PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages"
step frost_install_b 120 bash .frostB/install_b.sh
for b in cand base; do
  step std_${b}_r 150 /tmp/rime_$b bench --suite standard --out $W/std_${b}_r
  step sinks_${b}_r 60 /tmp/rime_$b bench --suite sinks --out $W/sinks_${b}_r
  step thd_${b}_r 60 /tmp/rime_$b bench --suite thd --out $W/thd_${b}_r
done
frost_std() { env $FP timeout 200 python3 .dev3/frost_peer_sink.py /tmp/w_Q2/std_base/cases.json > $W/frost_std.jsonl; }
step frost_std 200 frost_std
frost_sinks() { env $FP timeout 120 python3 .dev3/frost_peer_sink.py /tmp/w_Q2/sinks_base/cases.json > $W/frost_sinks.jsonl; }
step frost_sinks 120 frost_sinks
save; cat $W/times.txt; wc -l $W/frost_*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
