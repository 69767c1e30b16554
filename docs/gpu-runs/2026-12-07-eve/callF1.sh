#!/usr/bin/env bash
# Device call F1 (carry .frostA1 and .device with rime_main = 0f261b1 and rime_fast = main with
# the whole-tile copy path in load_tile; records held out). The first half of FROST's part A
# (F2-F4 follow on the same machine); the guarded small sweep on rime_fast (every case, both io
# types, every route), the determinism table (small) and the edge cases; memcheck of its d192 and thd cases; ncu's instruction count of the d192
# no-bias main kernel (two_kernel and atomic) on both binaries, which shows the two differ.
source docs/gpu-runs/2026-12-05-d256/lib.sh F1
step frost_keep 30 frost_keep
step sweep 300 /tmp/rime_fast selftest --small --guards --require-gpu
step det 60 /tmp/rime_fast selftest --determinism --small --require-gpu
step edge 60 /tmp/rime_fast selftest --edge --require-gpu
D="--suites docs/gpu-runs/2026-12-07-eve/d192_suite.json --suite d192"
F="b4 h16/16 s2048x2048 d192 bias=none bf16"
for b in main fast; do for r in two_kernel atomic; do
  step inst_${b}_$r 60 ncu --clock-control none -k regex:rime_ --metrics gpu__time_duration.sum,smsp__inst_executed.sum \
    /tmp/rime_$b bench $D --filter "$F" --route $r --warmup 0 --iters 1 --out $W/inst_${b}_$r
done; done
step mem_d192 120 $CS --tool memcheck --error-exitcode 9 /tmp/rime_fast selftest --small --require-gpu --filter d192v192
step mem_thd 120 $CS --tool memcheck --error-exitcode 9 /tmp/rime_fast selftest --small --require-gpu --filter thd
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt; tail -n 2 $W/sweep.txt $W/det.txt $W/edge.txt $W/mem_*.txt
for f in $W/inst_*.txt; do echo "== $f"; grep -E "^  rime_|gpu__time|inst_executed" $f; done
