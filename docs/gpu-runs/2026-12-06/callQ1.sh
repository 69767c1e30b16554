#!/usr/bin/env bash
# Device call Q1 (2026-12-06; carry .device and .frostA1), on a fresh machine: the first half of
# FROST's compiler library into /tmp for Q2, then prepared-do-ahead's call P1 unchanged: rime_cand
# (main f45e717 with do_ahead.patch) through the whole small sweep with guards, the determinism
# table, memcheck of the d64 and d128 cases, racecheck of the causal d128 cases, and ncu of one
# d64 atomic, one d128 two_kernel and one biased 192/128 row on both binaries. Then ncu's stall
# and throughput sections of rime_cand's main kernel on the d64 and d128 rows (for what next).
cp .frostA1/ir.part00 /tmp/ir.part00
bash docs/gpu-runs/prepared-do-ahead/callP1.sh
source docs/gpu-runs/2026-12-05-d256/lib.sh P1
ls -l /tmp/ir.part00 > $W/s0.txt
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats"
step prof64 90 ncu --clock-control none -k regex:rime_bwd_main $S /tmp/rime_cand bench --suite sinks --filter "s4096x4096 d64 bias=none bf16" --warmup 0 --iters 1 --out $W/prof64
step prof128 90 ncu --clock-control none -k regex:rime_bwd_main $S /tmp/rime_cand bench --suite standard --filter "b4 h16/16 s2048x2048 d128 bias=none bf16" --warmup 0 --iters 1 --out $W/prof128
save; cat $W/times.txt
