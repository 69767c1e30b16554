#!/usr/bin/env bash
# Device call W2 (prepared, not run), right after W1 on the same machine (carry .device): the
# standard and sinks suites on rime_base (main) and rime_addr, own route choices, in the order
# base, addr, addr, base; then `python3 docs/gpu-runs/2026-12-05-night/ab4.py W2/std_base
# W2/std_addr W2/std_base_r W2/std_addr_r` (and the same for sinks).
source docs/gpu-runs/2026-12-05-d256/lib.sh W2
for b in base addr addr_r base_r; do
  step std_$b 150 /tmp/rime_${b%_r} bench --suite standard --out $W/std_$b
  step sinks_$b 60 /tmp/rime_${b%_r} bench --suite sinks --out $W/sinks_$b
done
save; cat $W/times.txt
