#!/usr/bin/env bash
# Device call T1: rime_tile (the dQ accumulator in 8 x 8 tiles: dq_acc_off in attn.cuh) against
# rime_main (367085d), both built here (`cargo build --release -p rime-cli`, stripped, `xz -T2 -c`
# into .device/x/rime_main.xz and .device/x/rime_tile.xz); carry .device.
# Timings in the order main, tile, tile, main (standard no-bias rows, sinks), then each route
# that adds into the accumulator pinned on both (atomic on the standard no-bias rows, relay on
# their deterministic ones, the thd suite on own choices); correctness of tile: the guarded small
# sweep (every route), determinism, memcheck of the d64 cases; ncu of the sinks suite's d64 GQA
# row on both (time, instructions, L2 reduction requests and sectors).
source docs/gpu-runs/2026-12-05-d256/lib.sh T1
# FROST part A, first half (for T2; carry .frostA1 too): kept in /tmp on this machine.
cp .frostA1/ir.part00 /tmp/ir.part00 && ls -l /tmp/ir.part00 > $W/s0.txt
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
for r in 1 2; do for b in $( [ $r = 1 ] && echo "main tile" || echo "tile main"); do
  step std_${b}_$r 60 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_${b}_$r
  step sinks_${b}_$r 60 /tmp/rime_$b bench --suite sinks --out $W/sinks_${b}_$r
done; done
for b in main tile; do
  step atomic_$b 90 /tmp/rime_$b bench --suite standard --filter "bias=none" --route atomic --out $W/atomic_$b
  step relay_$b 90 /tmp/rime_$b bench --suite standard --filter "bias=none" --route relay --out $W/relay_$b
  step thd_$b 60 /tmp/rime_$b bench --suite thd --out $W/thd_$b
done
step guards 200 /tmp/rime_tile selftest --small --guards --require-gpu
step det 120 /tmp/rime_tile selftest --determinism --small --require-gpu
step mem 120 $CS --tool memcheck /tmp/rime_tile selftest --small --require-gpu --filter d64
M="gpu__time_duration.sum,smsp__inst_executed.sum,lts__t_requests_srcunit_l1_op_red.sum,lts__t_sectors_srcunit_l1_op_red.sum,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"
for b in main tile; do
  step kt64_$b 60 ncu --clock-control none -k regex:bwd_main --metrics $M /tmp/rime_$b bench --suite sinks --filter "h64/8 s4096x4096 d64 bias=none bf16" --warmup 0 --iters 1 --out $W/kt64_$b
done
save; cat $W/times.txt; tail -n 1 $W/guards.txt $W/det.txt; tail -n 2 $W/mem.txt
grep -hE "rime_|duration|inst_executed|red" $W/kt64_*.txt | grep -v PROF
