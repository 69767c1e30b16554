#!/usr/bin/env bash
# Device call F1 (2026-12-06; carry .device and .frostA1), on a fresh machine: the first half of
# FROST's compiler library into /tmp for F2; rime_bulk (the d64 atomic main kernel adding dQ by
# one bulk reduction a step from a staging tile) through the small sweep's d64 and thd cases
# with guards, memcheck and racecheck; the standard suite's no-bias rows, the sinks and thd
# suites on rime_main (dfe3ba4) then rime_bulk, own route choices; ncu time, executed
# instructions and stall reasons of the d64 atomic main kernel on both, and bulk's source view.
source docs/gpu-runs/2026-12-05-d256/lib.sh F1
cp .frostA1/ir.part00 /tmp/ir.part00 && ls -l /tmp/ir.part00 > $W/s0.txt
U=/tmp/rime_bulk
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step guards64 120 $U selftest --small --guards --require-gpu --filter d64v64
step guards_thd 120 $U selftest --small --guards --require-gpu --filter thd
for b in main bulk; do
  step std_$b 60 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_$b
  step sinks_$b 30 /tmp/rime_$b bench --suite sinks --out $W/sinks_$b
  step thd_$b 40 /tmp/rime_$b bench --suite thd --out $W/thd_$b
done
step mem64 90 $CS --tool memcheck $U selftest --small --filter d64v64 --require-gpu
step race64 90 $CS --tool racecheck --racecheck-report all $U selftest --small --filter d64v64-causal --require-gpu
ST="regex:smsp__warp_issue_stalled_.*_per_warp_active\.pct,smsp__inst_executed.sum,gpu__time_duration.sum"
for b in main bulk; do
  step kt64_$b 60 ncu --clock-control none -k regex:bwd_main --metrics $ST /tmp/rime_$b bench --suite sinks --filter "s4096x4096 d64 bias=none bf16" --warmup 0 --iters 1 --out $W/kt64_$b
done
step src64 60 ncu --clock-control none -k regex:bwd_main --launch-count 1 --section SourceCounters --section WarpStateStats -o $W/src64 $U bench --suite sinks --filter "s4096x4096 d64 bias=none bf16" --warmup 0 --iters 1 --out $W/src64b
step src64_csv 60 ncu -i $W/src64.ncu-rep --page source --csv --print-source sass
rm -f $W/src64.ncu-rep
save; cat $W/times.txt; tail -n 1 $W/guards64.txt $W/guards_thd.txt; tail -n 2 $W/mem64.txt $W/race64.txt
grep -hE "rime_|duration|inst_executed" $W/kt*_*.txt | grep -v PROF
