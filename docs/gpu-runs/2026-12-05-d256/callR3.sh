#!/usr/bin/env bash
# Device call R3, right after S1 on the same machine (FROST's part A must be installed): FROST and
# the cuDNN frontend in the same call as rime. rime_cand is the tree under test (cargo build
# --release -p rime-cli; strip; xz into .device/x/rime_cand.xz; sha256 in sha256.txt; R6 timed
# main against the same kernels). Carry .frostB, .device and .dev3 (the peer scripts: FROST's
# with the sink).
# The d256 and sinks suites on rime_cand's own choices, FROST on the same cases.json, the cuDNN
# frontend on the d256 cases; the small sweep's two_kernel cases with guards (the only kernels
# changed since R4's whole sweep: R4's fixes and the split pair's barrier) and the determinism
# table on rime_cand; rime_cand's suites again. About 300 s. R7 (every route of every
# suite, for the cost model) follows on the same machine.
source docs/gpu-runs/2026-12-05-d256/lib.sh R3
C=/tmp/rime_cand
FP="PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages"
step frost_install_b 120 bash .frostB/install_b.sh
step d256_cand 120 $C bench --suite d256 --out $W/d256_cand
frost() { env $FP python3 .frostB/frost_peer.py $W/d256_cand/cases.json > $W/frost_d256.jsonl; }
step frost_d256 200 frost
step sinks_cand 60 $C bench --suite sinks --out $W/sinks_cand
frosts() { env $FP python3 .dev3/frost_peer_sink.py $W/sinks_cand/cases.json > $W/frost_sinks.jsonl; }
step frost_sinks 200 frosts
fe() { python3 -m pip install -q --no-deps --no-index --target /tmp/fe .frostB/nvidia_cudnn_frontend-1.32.0-*.whl && PYTHONPATH=/tmp/fe python3 .dev3/cudnn_fe_sdpa_bwd.py $W/d256_cand/cases.json > $W/cudnn_d256.jsonl; }
step cudnn_d256 120 fe
step guards_2k 200 $C selftest --small --guards --require-gpu --filter two_kernel
step det 60 $C selftest --determinism --small
step d256_cand_r 120 $C bench --suite d256 --out $W/d256_cand_r
step sinks_cand_r 60 $C bench --suite sinks --out $W/sinks_cand_r
save; cat $W/times.txt; wc -l $W/frost_*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
