#!/usr/bin/env bash
# Device call R4, right after R3 on the same machine (the binaries are unpacked and their
# kernels cached): the candidate's correctness. The whole small sweep with guard zones (every
# route, THD, sinks, masks; every kernel whose SASS changed without a GPU run: the dQ GEMM, the
# dS zeroing, the 48 d64 broadcast-dBias main kernels, the forward); the full sweep's long
# cases with guards (Sq up to 1537: the small sweep's Sq <= 130 spans at most two of the dQ
# GEMM's 128-row tiles, so only these walk and skip KV chunks over many tiles under causal,
# bottom-right and window bands); determinism over 20 runs,
# racecheck on the d256 causal-bias and window-broadcast cases, memcheck on the d256 padding
# cases and the THD cases. About 500 s (each long filter 120 s at most). If anything fails, revert
# a629d9b and a5515da (the dQ GEMM's band walk and the dS zeroing) and say so.
source docs/gpu-runs/2026-12-05-d256/lib.sh R4
C=/tmp/rime_cand
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step guards 300 $C selftest --small --guards --require-gpu
step guards_long 0 long_cases 120
step det 100 $C selftest --determinism --small
step racecheck_bias 120 $CS --tool racecheck --racecheck-report all $C selftest --small --filter d256v256-causal-bias-dbias
step racecheck_bcast 120 $CS --tool racecheck --racecheck-report all $C selftest --small --filter d256v256-window-bcast
step memcheck_pad 120 $CS --tool memcheck $C selftest --small --filter d256v256-padding
step memcheck_thd 120 $CS --tool memcheck $C selftest --small --filter thd-
save; cat $W/times.txt; tail -n 2 $W/guards.txt $W/det.txt; grep -h "passed\|FAILED" $W/guards_long.txt; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $W/*check*.txt
