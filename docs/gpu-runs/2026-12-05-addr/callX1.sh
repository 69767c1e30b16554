#!/usr/bin/env bash
# Device call X1 (2026-12-05 late; carry .device and .frostA1), on a fresh machine: the first
# half of FROST's compiler library into /tmp for X2, then prepared-dq-addr's call W1: rime_addr
# (main with addr_rowmask.patch) through the whole small sweep with guards, the determinism
# table, memcheck of the d64 cases, a bounded racecheck of the causal d64 cases, and ncu time
# and executed instructions of one d64 atomic row and one d128 two_kernel row on both binaries.
source docs/gpu-runs/2026-12-05-d256/lib.sh X1
cp .frostA1/ir.part00 /tmp/ir.part00 && ls -l /tmp/ir.part00 > $W/s0.txt
A=/tmp/rime_addr
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step small 330 $A selftest --small --guards --require-gpu
step det 90 $A selftest --determinism --small --require-gpu
step memcheck 90 $CS --tool memcheck $A selftest --small --filter d64v64 --require-gpu
step racecheck 60 $CS --tool racecheck --racecheck-report all $A selftest --small --filter d64v64-causal --require-gpu
M="gpu__time_duration.sum,smsp__inst_executed.sum"
for b in base addr; do
  step kt64_$b 60 ncu --clock-control none --metrics $M /tmp/rime_$b bench --suite sinks --filter "s4096x4096 d64 bias=none bf16" --warmup 0 --iters 1 --out $W/kt64_$b
  step kt128_$b 60 ncu --clock-control none --metrics $M /tmp/rime_$b bench --suite standard --filter "b4 h16/16 s2048x2048 d128 bias=none bf16" --warmup 0 --iters 1 --out $W/kt128_$b
done
save; cat $W/times.txt; tail -n 1 $W/small.txt; grep -c FAIL $W/small.txt; tail -n 2 $W/det.txt $W/memcheck.txt $W/racecheck.txt
grep -hE "rime_|duration|inst_executed" $W/kt*_*.txt | grep -v PROF
