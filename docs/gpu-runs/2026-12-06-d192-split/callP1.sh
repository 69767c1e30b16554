#!/usr/bin/env bash
# Device call P1 (run 2026-12-06 08:31 UTC on an H100): rime_split (main with split.patch: the 192/128 two_kernel main
# kernel split by product) against rime_main. Build both (`cargo build --release -p rime-cli`,
# strip, `xz -T2 -c` into .device/x/rime_main.xz and .device/x/rime_split.xz); carry .device.
# About 200 s: the standard suite's 192/128 rows (every bias: the biased two_kernel rows also
# run the split kernel) in the order main, split, split, main; the small sweep's 192/128
# cases with guards (every route; the split kernel serves two_kernel), memcheck of them and
# racecheck of the causal ones on split;
# ncu time and executed instructions of the 192/128 main kernel on both.
source docs/gpu-runs/2026-12-05-d256/lib.sh P1
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
for r in 1 2; do for b in $( [ $r = 1 ] && echo "main split" || echo "split main"); do
  step std192_${b}_$r 60 /tmp/rime_$b bench --suite standard --filter "d192/128" --out $W/std192_${b}_$r
done; done
step guards 120 /tmp/rime_split selftest --small --guards --require-gpu --filter d192v128
step mem 90 $CS --tool memcheck /tmp/rime_split selftest --small --require-gpu --filter d192v128
step race 90 $CS --tool racecheck --racecheck-report all /tmp/rime_split selftest --small --require-gpu --filter d192v128-causal
M="gpu__time_duration.sum,smsp__inst_executed.sum"
for b in main split; do
  step kt192_$b 60 ncu --clock-control none -k regex:bwd_main --metrics $M /tmp/rime_$b bench --suite standard --filter "d192/128 bias=none bf16" --warmup 0 --iters 1 --out $W/kt192_$b
done
save; cat $W/times.txt; tail -n 1 $W/guards.txt; tail -n 2 $W/mem.txt $W/race.txt
grep -hE "rime_|duration|inst_executed" $W/kt192_*.txt | grep -v PROF
