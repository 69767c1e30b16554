#!/usr/bin/env bash
# Device call R6 (2026-12-05, after R4 failed): carry .device. Binaries: rime_fix (main with the
# two_kernel main kernel zeroing every skipped dS row again when dbias_reduce.cu sums a broadcast
# dBias from dS: R4's six failures and its one determinism failure), rime_fixs (rime_fix with
# the split kernel's S warps waiting at the pair barrier, bar.sync, instead of arriving,
# bar.arrive: R4's racecheck reported WAR hazards on the split kernel's Q buffer), rime_dq16
# (rime_fix with the d256 dQ GEMM on 16 warps) and rime_head (main at 0c5850b).
# Correctness first (every two_kernel case of the small sweep with guards, determinism,
# racecheck of both split variants with and without a bias), then the d256 suite, then the
# causal standard rows and the thd suite on own choices and pinned to two_kernel.
source docs/gpu-runs/2026-12-05-d256/lib.sh R6
C=/tmp/rime_fix; H=/tmp/rime_head; S=/tmp/rime_fixs; D=/tmp/rime_dq16
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step guards_2k 200 $C selftest --small --guards --require-gpu --filter two_kernel
step det 60 $C selftest --determinism --small
for b in fix fixs; do for c in d256v256-plain/bf16/bhsd/two_kernel d256v256-causal-bias-dbias/bf16/bshd/two_kernel; do
  step race_${b}_${c%%/*} 90 $CS --tool racecheck --racecheck-report all /tmp/rime_$b selftest --small --filter $c; done; done
step d256_fix 60 $C bench --suite d256 --out $W/d256_fix
step d256_dq16 60 $D bench --suite d256 --out $W/d256_dq16
step d256_fixs 60 $S bench --suite d256 --out $W/d256_fixs
step d256_head 60 $H bench --suite d256 --out $W/d256_head
step d256_fix_r 60 $C bench --suite d256 --out $W/d256_fix_r
ROW="b4 h16/16 s2048x2048 d256 bias=none det bf16"
kt() { ncu --clock-control none --metrics gpu__time_duration.sum,launch__block_size $1 bench --suite d256 --filter "$ROW" --warmup 0 --iters 1 --out $W/pk_$2 > $W/kt_$2.log 2>&1; }
step kt_dq16 0 kt $D dq16
step kt_fix 0 kt $C fix
causal_thd_rows 60 30
save; cat $W/times.txt; tail -n 1 $W/guards_2k.txt; grep -h "cases" $W/det.txt | tail -2
grep -H "RACECHECK SUMMARY" $W/race_*.txt; grep -h "gpu__time\|block_size\|dq_gemm\|bwd_main" $W/kt_*.log | head -24
