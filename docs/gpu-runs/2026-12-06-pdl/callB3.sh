#!/usr/bin/env bash
# Device call B3, right after B2 on the same machine (carry .frostB and .dev3, FROST's peer
# script with the sink): FROST's part B; the whole standard suite, the sinks suite and the d256
# suite on rime_final, the no-bias standard rows and the sinks suite on rime_main; then FROST on
# rime_final's cases.json files.
source docs/gpu-runs/2026-12-05-d256/lib.sh B3
FP="PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages"
step frost_install_b 120 bash .frostB/install_b.sh
step std_final 110 /tmp/rime_final bench --suite standard --out $W/std_final
step sinks_final 30 /tmp/rime_final bench --suite sinks --out $W/sinks_final
step d256_final 60 /tmp/rime_final bench --suite d256 --out $W/d256_final
step std_main 40 /tmp/rime_main bench --suite standard --filter "bias=none" --out $W/std_main
step sinks_main 30 /tmp/rime_main bench --suite sinks --out $W/sinks_main
frost_std() { env $FP timeout 200 python3 .dev3/frost_peer_sink.py $W/std_final/cases.json > $W/frost_std.jsonl; }
step frost_std 200 frost_std
frost_sinks() { env $FP timeout 70 python3 .dev3/frost_peer_sink.py $W/sinks_final/cases.json > $W/frost_sinks.jsonl; }
step frost_sinks 70 frost_sinks
frost_d256() { env $FP timeout 90 python3 .dev3/frost_peer_sink.py $W/d256_final/cases.json > $W/frost_d256.jsonl; }
step frost_d256 90 frost_d256
save; cat $W/times.txt; wc -l $W/frost_*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
