#!/usr/bin/env bash
# Device call C, right after B on the same machine (carry .device, .frostB and .dev3: FROST's
# peer script with the sink, the cuDNN frontend's): FROST's part B, then in one call the
# standard and sinks suites on rime_head, rime_d64k and rime_d64kv (own route choices) and FROST
# on the same cases.json, and rime_head's d64 rows again for the run-to-run spread.
source docs/gpu-runs/2026-12-05-d256/lib.sh C
FP="PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages"
step frost_install_b 120 bash .frostB/install_b.sh
for b in head d64k d64kv; do step std_$b 120 /tmp/rime_$b bench --suite standard --out $W/std_$b; done
frost_std() { env $FP timeout 200 python3 .dev3/frost_peer_sink.py $W/std_head/cases.json > $W/frost_std.jsonl; }
step frost_std 200 frost_std
for b in head d64k d64kv; do step sinks_$b 60 /tmp/rime_$b bench --suite sinks --out $W/sinks_$b; done
frost_sinks() { env $FP timeout 120 python3 .dev3/frost_peer_sink.py $W/sinks_head/cases.json > $W/frost_sinks.jsonl; }
step frost_sinks 120 frost_sinks
step std_head_r 60 /tmp/rime_head bench --suite standard --filter d64 --out $W/std_head_r
step sinks_head_r 30 /tmp/rime_head bench --suite sinks --out $W/sinks_head_r
save; cat $W/times.txt; wc -l $W/frost_*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
