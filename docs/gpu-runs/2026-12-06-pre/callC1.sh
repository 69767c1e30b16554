#!/usr/bin/env bash
# Prepared device call C1 (not run: no device time was left to start a machine): rime_cv (c7fee0c with small_kernels.patch: the convert kernel taking 4 vectors a thread, all loads
# first, and the preprocess kernel issuing two passes' loads together over 32-row blocks) against
# rime_main (the binary P1-F5 called rime_pre: c7fee0c's kernels). Carry .device. Timings in the
# order main, cv, cv, main; ncu of the preprocess and convert kernels on two rows; then rime_cv's
# guarded small sweep (every route), bounded so that the call fits what device time is left.
source docs/gpu-runs/2026-12-05-d256/lib.sh C1
for b in main cv cv main; do r=$(( $(ls $W | grep -c "^std_${b}_") / 2 + 1 ))
  step std_${b}_$r 60 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_${b}_$r
  step sinks_${b}_$r 40 /tmp/rime_$b bench --suite sinks --out $W/sinks_${b}_$r
  step thd_${b}_$r 60 /tmp/rime_$b bench --suite thd --out $W/thd_${b}_$r
done
for f in "b8 h16/16 s1024x1024 d64 bias=none bf16" "b4 h16/16 s2048x2048 d128 bias=none bf16"; do
  n=$(echo "$f" | tr -c 'a-z0-9' '_' | cut -c1-28)
  step kt_cv_$n 60 ncu --clock-control none -k regex:"preprocess|convert" --metrics gpu__time_duration.sum,dram__bytes.sum /tmp/rime_cv bench --suite standard --filter "$f" --warmup 0 --iters 1 --out $W/kt_cv_$n
done
save; cat $W/times.txt; grep -hE "rime_|duration|dram" $W/kt_*.txt | grep -v PROF
# With less than the whole sweep's time (GUARD_S < 170): its odd-length and thd cases only.
if [ ${GUARD_S:-170} -ge 170 ]; then step guards 170 /tmp/rime_cv selftest --small --guards --require-gpu
else for f in s200 thd; do step guards_$f $(( GUARD_S / 2 )) /tmp/rime_cv selftest --small --guards --require-gpu --filter $f; done; fi
save; tail -qn 1 $W/guards*.txt; grep -m3 "^FAIL" $W/guards*.txt
