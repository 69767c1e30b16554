#!/usr/bin/env bash
# Device call N2, right after N1 on the same machine (carry .frostB, .dev3 and .device): FROST's
# part B; FROST measured twice against rime_head in one call on the standard suite's no-bias rows
# and the sinks suite, interleaved head, FROST, head, FROST, head (J3's FROST / rime of 1.159 and
# 1.186 rest on one FROST run); the d256 suite on head and FROST on its cases; then the d256
# suite pinned to atomic and to relay (the d256 builds with dQ reductions, 16-byte ones in the
# no-bias builds only; M1b's d256 A/B ran every row on two_kernel, whose kernel has none) on
# rime_head and rime_main (629d540, before the fragment-order accumulator), order head, main,
# main, head. (Comment corrected after the run; the commands are as they ran.)
source docs/gpu-runs/2026-12-05-d256/lib.sh N2
step frost_install_b 120 frost_b
head_rows() { turn std 60 head bench --suite standard --filter "bias=none"; turn sinks 40 head bench --suite sinks; }
for f in 1 2; do head_rows
  step frost_std_$f 150 frost_peer $W/std_head_1/cases.json $W/frost_std_$f.jsonl 150
  step frost_sinks_$f 70 frost_peer $W/sinks_head_1/cases.json $W/frost_sinks_$f.jsonl 70
done; head_rows
turn d256 60 head bench --suite d256
step frost_d256 90 frost_peer $W/d256_head_1/cases.json $W/frost_d256.jsonl 90
for route in atomic relay; do for b in head main main head; do
  turn d256_$route 60 $b bench --suite d256 --route $route; done; done
save; cat $W/times.txt; wc -l $W/frost_*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
