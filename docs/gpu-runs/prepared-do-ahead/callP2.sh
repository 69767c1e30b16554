#!/usr/bin/env bash
# Device call P2 (prepared, not run), right after P1 on the same machine (carry .device): the
# standard, sinks and thd suites on rime_base (main) and rime_cand, own route choices, in the
# order base, cand, cand, base; then
# `python3 docs/gpu-runs/2026-12-05-night/ab4.py P2/std_base P2/std_cand P2/std_base_r P2/std_cand_r`
# (and the same for sinks and thd).
source docs/gpu-runs/2026-12-05-d256/lib.sh P2
for b in base cand cand_r base_r; do
  step std_$b 150 /tmp/rime_${b%_r} bench --suite standard --out $W/std_$b
  step sinks_$b 60 /tmp/rime_${b%_r} bench --suite sinks --out $W/sinks_$b
  step thd_$b 60 /tmp/rime_${b%_r} bench --suite thd --out $W/thd_$b
done
save; cat $W/times.txt
