#!/usr/bin/env bash
# Build rime_cand from the commit under test first (cargo build --release -p rime-cli; strip;
# xz into .device/x/rime_cand.xz; the rime_cand of 2026-12-05 predates the dS zeroing change).
# Device call R3, right after S1 on the same machine: FROST's part B, then the candidate (rime_cand: the d256
# two_kernel main kernel split by product, the dQ GEMM walking only the band's KV chunks, last
# Q tile first) against FROST and main (rime_head, 0c5850b) in one call: the d256 suite on
# rime's own choices, FROST on the same cases.json, main's d256 suite; then the candidate's
# correctness (whole small sweep with guard zones, determinism, racecheck and memcheck on d256
# cases) and the standard suite's causal rows, candidate and main.
source docs/gpu-runs/2026-12-05-d256/lib.sh R3
C=/tmp/rime_cand; H=/tmp/rime_head
FP="PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages"
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step frost_install_b 120 bash .frostB/install_b.sh
step d256_cand 120 $C bench --suite d256 --out $W/d256_cand
frost() { env $FP python3 .frostB/frost_peer.py $W/d256_cand/cases.json > $W/frost_d256.jsonl; }
step frost_d256 200 frost
step d256_head 120 $H bench --suite d256 --out $W/d256_head
step guards 300 $C selftest --small --guards --require-gpu
step det 100 $C selftest --determinism --small
step racecheck_bias 120 $CS --tool racecheck --racecheck-report all $C selftest --small --filter d256v256-causal-bias-dbias
step racecheck_bcast 120 $CS --tool racecheck --racecheck-report all $C selftest --small --filter d256v256-window-bcast
step memcheck_pad 120 $CS --tool memcheck $C selftest --small --filter d256v256-padding
step std_causal_cand 120 $C bench --suite standard --filter causal --out $W/std_causal_cand
step std_causal_head 120 $H bench --suite standard --filter causal --out $W/std_causal_head
save; cat $W/times.txt; tail -n 2 $W/guards.txt $W/det.txt; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $W/*check*.txt; wc -l $W/frost_d256.jsonl
