#!/usr/bin/env bash
# Device call T3, right after T2 on the same machine (carry .frostB and .dev3, FROST's peer script
# with the sink): FROST's part B; the whole standard suite and the sinks suite on rime_tile and
# the no-bias standard rows and sinks suite on rime_main; then FROST on rime_tile's cases.json
# files (the same cases as main's).
source docs/gpu-runs/2026-12-05-d256/lib.sh T3
FP="PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages"
step frost_install_b 120 bash .frostB/install_b.sh
step std_tile 110 /tmp/rime_tile bench --suite standard --out $W/std_tile
step sinks_tile 30 /tmp/rime_tile bench --suite sinks --out $W/sinks_tile
step std_main 40 /tmp/rime_main bench --suite standard --filter "bias=none" --out $W/std_main
step sinks_main 30 /tmp/rime_main bench --suite sinks --out $W/sinks_main
frost_std() { env $FP timeout 200 python3 .dev3/frost_peer_sink.py $W/std_tile/cases.json > $W/frost_std.jsonl; }
step frost_std 200 frost_std
frost_sinks() { env $FP timeout 80 python3 .dev3/frost_peer_sink.py $W/sinks_tile/cases.json > $W/frost_sinks.jsonl; }
step frost_sinks 80 frost_sinks
save; cat $W/times.txt; wc -l $W/frost_*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
