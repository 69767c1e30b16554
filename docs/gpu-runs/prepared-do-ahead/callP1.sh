#!/usr/bin/env bash
# Device call P1 (prepared 2026-12-05 late, not run; carry .device): rime_cand (main with
# do_ahead.patch: two dO buffers on d64, d128 (V staged) and 192/128, the next dO copied ahead
# only without a bias) checked: the whole small sweep with guards, the determinism table,
# memcheck of the d64 and d128 cases, racecheck of their causal cases; ncu time and executed
# instructions of one d64 atomic, one d128 two_kernel and one d192/128 row on both binaries.
source docs/gpu-runs/2026-12-05-d256/lib.sh P1
C=/tmp/rime_cand
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step small 330 $C selftest --small --guards --require-gpu
step det 90 $C selftest --determinism --small --require-gpu
step memcheck 120 $CS --tool memcheck $C selftest --small --filter d64v64 --require-gpu
step memcheck128 120 $CS --tool memcheck $C selftest --small --filter d128v128 --require-gpu
step racecheck 90 $CS --tool racecheck --racecheck-report all $C selftest --small --filter d128v128-causal --require-gpu
M="gpu__time_duration.sum,smsp__inst_executed.sum"
for b in base cand; do
  step kt64_$b 60 ncu --clock-control none --metrics $M /tmp/rime_$b bench --suite sinks --filter "s4096x4096 d64 bias=none bf16" --warmup 0 --iters 1 --out $W/kt64_$b
  step kt128_$b 60 ncu --clock-control none --metrics $M /tmp/rime_$b bench --suite standard --filter "b4 h16/16 s2048x2048 d128 bias=none bf16" --warmup 0 --iters 1 --out $W/kt128_$b
  step kt192_$b 60 ncu --clock-control none --metrics $M /tmp/rime_$b bench --suite standard --filter "s4096x4096 d192/128 bias=batch bf16" --warmup 0 --iters 1 --out $W/kt192_$b
done
save; cat $W/times.txt; tail -n 1 $W/small.txt; grep -c FAIL $W/small.txt; tail -n 2 $W/det.txt $W/memcheck*.txt $W/racecheck.txt
grep -hE "rime_|duration|inst_executed" $W/kt*_*.txt | grep -v PROF
