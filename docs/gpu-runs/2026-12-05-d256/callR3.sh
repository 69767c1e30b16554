#!/usr/bin/env bash
# Build rime_cand from the commit under test first (cargo build --release -p rime-cli; strip;
# xz into .device/x/rime_cand.xz) and keep rime_head (main at 0c5850b). Carry .frostB, .device
# and .dev3 (the peer scripts: FROST's with the sink, which G3 used).
# Device call R3, right after S1 on the same machine (FROST's part A must be installed): the
# timings, with FROST in the same call. The candidate (rime_cand: the d256 two_kernel main
# kernel split by product, the dQ GEMM walking only the band's KV chunks, the narrower dS
# zeroing) on the d256 and sinks suites on its own choices, FROST on the same cases.json, main
# on the d256 and sinks suites; then the standard suite's causal rows and the thd suite, candidate and
# main on their own choices and the candidate pinned to two_kernel (the cost model's
# two_kernel term was fitted when the dQ GEMM walked every chunk: these rows recalibrate it).
# About 300 s. R4 (correctness) follows on the same machine.
source docs/gpu-runs/2026-12-05-d256/lib.sh R3
C=/tmp/rime_cand; H=/tmp/rime_head
FP="PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages"
step frost_install_b 120 bash .frostB/install_b.sh
step d256_cand 120 $C bench --suite d256 --out $W/d256_cand
frost() { env $FP python3 .frostB/frost_peer.py $W/d256_cand/cases.json > $W/frost_d256.jsonl; }
step frost_d256 200 frost
step sinks_cand 60 $C bench --suite sinks --out $W/sinks_cand
frosts() { env $FP python3 .dev3/frost_peer_sink.py $W/sinks_cand/cases.json > $W/frost_sinks.jsonl; }
step frost_sinks 200 frosts
step d256_head 120 $H bench --suite d256 --out $W/d256_head
causal_thd_rows 120 60
step d256_cand_r 120 $C bench --suite d256 --out $W/d256_cand_r
step sinks_head 60 $H bench --suite sinks --out $W/sinks_head
step sinks_cand_r 60 $C bench --suite sinks --out $W/sinks_cand_r
save; cat $W/times.txt; wc -l $W/frost_*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
