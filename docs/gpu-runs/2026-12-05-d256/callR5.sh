#!/usr/bin/env bash
# Device call R5: R4 and R3's rime-only rows in one call, for when the machine is short and
# FROST's three calls do not fit (2026-12-05, 10:00 UTC: an hour of refusals, minutes left).
# Correctness first (the small sweep and the long cases with guards, determinism), then the
# candidate against main on the d256 suite, the standard suite's causal rows and the thd suite
# (own choices; the candidate also pinned to two_kernel), then memcheck on the THD cases.
# Carry .device. The call's 600 s may end it early: each step's results are saved as it ends.
source docs/gpu-runs/2026-12-05-d256/lib.sh R5
C=/tmp/rime_cand; H=/tmp/rime_head
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step guards 240 $C selftest --small --guards --require-gpu
step guards_long 0 long_cases 60
step det 60 $C selftest --determinism --small
step d256_cand 60 $C bench --suite d256 --out $W/d256_cand
step d256_head 60 $H bench --suite d256 --out $W/d256_head
causal_thd_rows 60 30
step memcheck_thd 60 $CS --tool memcheck $C selftest --small --filter thd-
save; cat $W/times.txt; tail -n 2 $W/guards.txt $W/det.txt; grep -h "passed\|FAILED" $W/guards_long.txt
