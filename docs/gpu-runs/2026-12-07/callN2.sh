#!/usr/bin/env bash
# Device call N2, right after N1 on the same machine (carry .frostA2; the binaries are N1's, in
# /tmp): FROST's part A; the d256 suite pinned to atomic and to relay on rime_head (16-byte dQ
# reductions) and rime_main (629d540, before them), order head, main, main, head. M1b's d256 A/B
# ran every row on two_kernel, whose d256 kernel has no dQ reductions; these builds do.
source docs/gpu-runs/2026-12-05-d256/lib.sh N2
step frost_install_a 120 frost_a
for route in atomic relay; do for b in head main main head; do
  turn d256_$route 90 $b bench --suite d256 --route $route; done; done
save; cat $W/times.txt; tail -qn 2 $W/frost_install_a.txt
