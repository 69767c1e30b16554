#!/usr/bin/env bash
# Device call D0 (2026-12-06 morning; carry .device): rime_main (dfe3ba4) against rime_A (d64
# with two dO buffers, so that the next dO, Stats and delta are copied as the step starts and the
# barrier after dV goes), standard no-bias rows and sinks suite, order main, A, main, A; stall
# reasons and the per-instruction source view (SASS) of the d64 atomic and 192/128 two_kernel
# main kernels on rime_main; memcheck and racecheck of the 192/128 and d256 small cases (owed
# since the copy groups).
source docs/gpu-runs/2026-12-05-d256/lib.sh D0
for r in 1 2; do for b in main A; do
  step std_${b}_$r 90 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_${b}_$r
  step sinks_${b}_$r 40 /tmp/rime_$b bench --suite sinks --out $W/sinks_${b}_$r
done; done
ST="regex:smsp__warp_issue_stalled_.*_per_warp_active\.pct,smsp__inst_executed.sum,gpu__time_duration.sum"
step st64 60 ncu --clock-control none -k regex:bwd_main --metrics $ST /tmp/rime_main bench --suite sinks --filter "s4096x4096 d64 bias=none bf16" --warmup 0 --iters 1 --out $W/st64
step st192 60 ncu --clock-control none -k regex:bwd_main --metrics $ST /tmp/rime_main bench --suite standard --filter "d192/128 bias=none bf16" --warmup 0 --iters 1 --out $W/st192
step src64 120 ncu --clock-control none -k regex:bwd_main --launch-count 1 --section SourceCounters --section WarpStateStats -o $W/src64 /tmp/rime_main bench --suite sinks --filter "s4096x4096 d64 bias=none bf16" --warmup 0 --iters 1 --out $W/src64b
step src64_csv 60 ncu -i $W/src64.ncu-rep --page source --csv --print-source sass
step src64_det 60 ncu -i $W/src64.ncu-rep --page details --print-details all
rm -f $W/src64.ncu-rep
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step mem192 120 $CS --tool memcheck /tmp/rime_main selftest --small --filter d192v128 --require-gpu
step mem256 90 $CS --tool memcheck /tmp/rime_main selftest --small --filter d256v256 --require-gpu
step race192 60 $CS --tool racecheck --racecheck-report all /tmp/rime_main selftest --small --filter d192v128-causal --require-gpu
step race256 60 $CS --tool racecheck --racecheck-report all /tmp/rime_main selftest --small --filter d256v256-causal --require-gpu
save; cat $W/times.txt; grep -hE "rime_|duration|inst_executed" $W/st*.txt | grep -v PROF | head; tail -n 2 $W/mem*.txt $W/race*.txt
