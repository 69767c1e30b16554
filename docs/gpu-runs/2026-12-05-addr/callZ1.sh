#!/usr/bin/env bash
# Device call Z1 (2026-12-05 late; carry .device): rime_do (main at 3ede05e with two dO / Stats /
# delta buffers in the d192/128 main kernel, bwd_d192v128_32x64_v2) against rime_main (main):
# guarded small sweep of the d192/128 cases (and the d160/96 ones padded into it, and the d64
# ones, whose kernel source changed only in form), the determinism table, memcheck and racecheck
# of d192/128; ncu time and executed instructions of the d192/128 main kernel on both; the
# standard suite's d192/128 rows in the order main, do, main, do.
source docs/gpu-runs/2026-12-05-d256/lib.sh Z1
D=/tmp/rime_do
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step g192 200 $D selftest --small --guards --require-gpu --filter d192v128
step g160 60 $D selftest --small --guards --require-gpu --filter pad-d160v96
step det 90 $D selftest --determinism --small --require-gpu
step g64 120 $D selftest --small --guards --require-gpu --filter d64v64
step memcheck 60 $CS --tool memcheck $D selftest --small --filter d192v128 --require-gpu
step racecheck 60 $CS --tool racecheck --racecheck-report all $D selftest --small --filter d192v128-causal --require-gpu
M="gpu__time_duration.sum,smsp__inst_executed.sum"
for b in main do; do
  step kt_$b 60 ncu --clock-control none --metrics $M /tmp/rime_$b bench --suite standard --filter "s4096x4096 d192/128 bias=none bf16" --warmup 0 --iters 1 --out $W/kt_$b
done
for b in main do main_r do_r; do
  step std_$b 60 /tmp/rime_${b%_r} bench --suite standard --filter d192 --out $W/std_$b
done
save; cat $W/times.txt; tail -qn 1 $W/g*.txt; tail -n 2 $W/det.txt $W/memcheck.txt $W/racecheck.txt
grep -hE "rime_|duration|inst_executed" $W/kt_*.txt | grep -v PROF
