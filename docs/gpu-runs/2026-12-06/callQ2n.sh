#!/usr/bin/env bash
# Device call Q2n (2026-12-06; carry .device), right after Q1 when too little device time was left
# for FROST's install: the standard, sinks and thd suites on rime_base (main) and rime_cand, own
# route choices, in the order base, cand, cand, base.
source docs/gpu-runs/2026-12-05-d256/lib.sh Q2n
for b in base cand cand_r base_r; do
  step std_$b 150 /tmp/rime_${b%_r} bench --suite standard --out $W/std_$b
  step sinks_$b 60 /tmp/rime_${b%_r} bench --suite sinks --out $W/sinks_$b
  step thd_$b 60 /tmp/rime_${b%_r} bench --suite thd --out $W/thd_$b
done
save; cat $W/times.txt
