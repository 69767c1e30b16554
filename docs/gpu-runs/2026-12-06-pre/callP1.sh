#!/usr/bin/env bash
# Device call P1: rime_pre (main with preprocess.patch: the preprocess kernel
# with 16-byte loads of dO and O and 16-byte zeroing stores) against rime_main. Build both here
# (`git apply` the patch in a worktree; `cargo build --release -p rime-cli`, strip, `xz -T2 -c`
# into .device/x/rime_main.xz and .device/x/rime_pre.xz); carry .device and
# .frostA1. About 250 s on a fresh
# machine; F2 and F3 follow it on the same machine. Timings in the order main, pre, pre, main (standard suite's no-bias rows, sinks, thd
# on own routes); ncu time of the preprocess and convert kernels on two rows on both. rime_pre's correctness is checked in F2.
source docs/gpu-runs/2026-12-05-d256/lib.sh P1
step frost_keep 30 frost_keep  # FROST's first half for F2 and F3 (carry .frostA1)
for b in main pre pre main; do r=$(( $(ls $W | grep -c "^std_${b}_") / 2 + 1 ))
  step std_${b}_$r 60 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_${b}_$r
  step sinks_${b}_$r 40 /tmp/rime_$b bench --suite sinks --out $W/sinks_${b}_$r
  step thd_${b}_$r 60 /tmp/rime_$b bench --suite thd --out $W/thd_${b}_$r
done
for b in main pre; do for f in "b8 h16/16 s1024x1024 d64 bias=none bf16" "b4 h16/16 s2048x2048 d128 bias=none bf16"; do
  n=$(echo "$f" | tr -c 'a-z0-9' '_' | cut -c1-28)
  step kt_${b}_$n 60 ncu --clock-control none -k regex:"preprocess|convert" --metrics gpu__time_duration.sum,dram__bytes.sum /tmp/rime_$b bench --suite standard --filter "$f" --warmup 0 --iters 1 --out $W/kt_${b}_$n
done; done
save; cat $W/times.txt; grep -hE "rime_|duration|dram" $W/kt_*.txt | grep -v PROF
