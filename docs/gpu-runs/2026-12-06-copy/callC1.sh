#!/usr/bin/env bash
# Device call C1 (2026-12-06; carry .device), in order of need (the device time left may cut
# the end): the standard suite's rows without a bias and the sinks suite, own route choices, on
# rime_base (main), then rime_B (copy groups + 8-byte dQ reductions); rime_B through the whole
# small sweep with guards and the determinism table; the same rows on base again (its repeat);
# ncu time and executed instructions of one d64 atomic row on both.
source docs/gpu-runs/2026-12-05-d256/lib.sh C1
B=/tmp/rime_B
M="gpu__time_duration.sum,smsp__inst_executed.sum"
for b in base B; do
  step std_$b 90 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_$b
  step sinks_$b 40 /tmp/rime_$b bench --suite sinks --out $W/sinks_$b
done
step small 200 $B selftest --small --guards --require-gpu
step det 60 $B selftest --determinism --small --require-gpu
step std_base_r 90 /tmp/rime_base bench --suite standard --filter "bias=none" --out $W/std_base_r
step sinks_base_r 40 /tmp/rime_base bench --suite sinks --out $W/sinks_base_r
for b in base B; do
  step kt64_$b 60 ncu --clock-control none --metrics $M /tmp/rime_$b bench --suite sinks --filter "s4096x4096 d64 bias=none bf16" --warmup 0 --iters 1 --out $W/kt64_$b
done
save; cat $W/times.txt; tail -n 1 $W/small.txt; grep -c FAIL $W/small.txt; tail -n 2 $W/det.txt
grep -hE "rime_|duration|inst_executed" $W/kt*_*.txt | grep -v PROF
