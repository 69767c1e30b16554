#!/usr/bin/env bash
# Prepared device call G1 (not run): rime_dq4 (main with stages.patch: the d128 and 192/128 dQ
# GEMMs in four 32-column stages) against rime_main. Build both here (`git apply` the patch in a
# worktree; `cargo build --release -p rime-cli`, strip, `xz -T2 -c` into .device/x/rime_main.xz
# and .device/x/rime_dq4.xz); carry .device. About 250 s on a fresh machine.
# The standard suite's no-bias rows and the thd suite pinned to two_kernel (d64's GEMM is
# unchanged: the control), order main, dq4, dq4, main; dq4's small sweep of two_kernel cases
# with guards, determinism, memcheck of the odd-length cases; ncu time of the dQ GEMM.
source docs/gpu-runs/2026-12-05-d256/lib.sh G1
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
for r in 1 2; do for b in $( [ $r = 1 ] && echo "main dq4" || echo "dq4 main"); do
  step std_${b}_$r 60 /tmp/rime_$b bench --suite standard --filter "bias=none" --route two_kernel --out $W/std_${b}_$r
  step thd_${b}_$r 60 /tmp/rime_$b bench --suite thd --route two_kernel --out $W/thd_${b}_$r
done; done
step guards 150 /tmp/rime_dq4 selftest --small --guards --require-gpu --filter /two_kernel
step det 90 /tmp/rime_dq4 selftest --determinism --small --require-gpu
step mem 60 $CS --tool memcheck /tmp/rime_dq4 selftest --small --require-gpu --filter s200
for b in main dq4; do for f in "h16/16 s2048x2048 d128 bias=none det bf16" "d192/128 bias=none det bf16"; do
  n=$(echo "$f" | tr -c 'a-z0-9' '_' | cut -c1-24)
  step kt_${b}_$n 60 ncu --clock-control none -k regex:dq_gemm --metrics gpu__time_duration.sum /tmp/rime_$b bench --suite standard --filter "$f" --warmup 0 --iters 1 --out $W/kt_${b}_$n
done; done
save; cat $W/times.txt; tail -n 1 $W/guards.txt $W/det.txt; tail -n 2 $W/mem.txt
grep -hE "rime_|dq_gemm|duration" $W/kt_*.txt | grep -v PROF
