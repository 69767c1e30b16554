#!/usr/bin/env bash
# Device call S1 (2026-12-06; carry .device): rime_stag (main with each KV tile's walk of the
# band starting at its own Q tile on the atomic route, so that side-by-side blocks add into
# different dQ rows) against rime_main (dfe3ba4): the standard no-bias rows and the sinks suite,
# order main, stag, stag, main; the small sweep's atomic cases with guards on stag; ncu time,
# executed instructions, L2 reduction and read sectors and stall reasons of the d64 atomic main
# kernel on both. (Sized to the
# session's last device time.)
source docs/gpu-runs/2026-12-05-d256/lib.sh S1
ab() { local b=$1 r=$2
  step std_${b}_$r 60 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_${b}_$r
  step sinks_${b}_$r 30 /tmp/rime_$b bench --suite sinks --out $W/sinks_${b}_$r; }
ab main 1; ab stag 1; ab stag 2; ab main 2
step guards_atomic 90 /tmp/rime_stag selftest --small --guards --require-gpu --filter atomic
ST="regex:smsp__warp_issue_stalled_.*_per_warp_active\.pct,smsp__inst_executed.sum,gpu__time_duration.sum,lts__t_sectors_op_red.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum"
for b in main stag; do
  step kt64_$b 60 ncu --clock-control none -k regex:bwd_main --metrics $ST /tmp/rime_$b bench --suite sinks --filter "s4096x4096 d64 bias=none bf16" --warmup 0 --iters 1 --out $W/kt64_$b
done
save; cat $W/times.txt; tail -n 1 $W/guards_atomic.txt
grep -hE "rime_|duration|inst_executed|lts__" $W/kt*_*.txt | grep -v PROF
