#!/usr/bin/env bash
# Device call F3, right after F2 on the same machine (carry .device, .frostB and .dev3: FROST's
# peer script with the sink): FROST's part B; the whole standard suite and the sinks suite on
# rime_main (F1 and F2 had rime_bulk lose on its rows), the d256 suite on rime_main; then
# FROST on the same cases.json files (main's).
source docs/gpu-runs/2026-12-05-d256/lib.sh F3
FP="PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages"
step frost_install_b 120 bash .frostB/install_b.sh
for b in main; do
  step std_$b 100 /tmp/rime_$b bench --suite standard --out $W/std_$b
  step sinks_$b 30 /tmp/rime_$b bench --suite sinks --out $W/sinks_$b
done
step d256_main 60 /tmp/rime_main bench --suite d256 --out $W/d256_main
frost_std() { env $FP timeout 200 python3 .dev3/frost_peer_sink.py $W/std_main/cases.json > $W/frost_std.jsonl; }
step frost_std 200 frost_std
frost_sinks() { env $FP timeout 80 python3 .dev3/frost_peer_sink.py $W/sinks_main/cases.json > $W/frost_sinks.jsonl; }
step frost_sinks 80 frost_sinks
frost_d256() { env $FP timeout 100 python3 .dev3/frost_peer_sink.py $W/d256_main/cases.json > $W/frost_d256.jsonl; }
step frost_d256 100 frost_d256
save; cat $W/times.txt; wc -l $W/frost_*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
