#!/usr/bin/env bash
# Device call G, right after F (carry .device, .frostB, .dev3): FROST's part B; the standard
# suite's broadcast rows on rime_kv (main: the adopted d64 kernel) and rime_db, own route
# choices, FROST on the same cases.json, both binaries again (order kv, db, FROST, db, kv).
source docs/gpu-runs/2026-12-05-d256/lib.sh G
FP="PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages"
step frost_install_b 120 bash .frostB/install_b.sh
step bc_kv 90 /tmp/rime_kv bench --suite standard --filter broadcast --out $W/bc_kv
step bc_db 90 /tmp/rime_db bench --suite standard --filter broadcast --out $W/bc_db
frost_bc() { env $FP timeout 150 python3 .dev3/frost_peer_sink.py $W/bc_kv/cases.json > $W/frost_bc.jsonl; }
step frost_bc 150 frost_bc
step bc_db_r 90 /tmp/rime_db bench --suite standard --filter broadcast --out $W/bc_db_r
step bc_kv_r 90 /tmp/rime_kv bench --suite standard --filter broadcast --out $W/bc_kv_r
save; cat $W/times.txt; wc -l $W/frost_bc.jsonl
