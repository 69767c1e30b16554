#!/usr/bin/env bash
# Device call J4, right after J3 on the same machine (no carry; J1's binaries in /tmp): the thd
# suite and the whole standard suite (every bias) on main and rime_v4, order main, v4, v4, main.
# Ran as this one command line; kept here as the record of what ran.
source docs/gpu-runs/2026-12-05-d256/lib.sh J4; for b in main v4 v4 main; do r=$(( $(ls $W | grep -c "^thd_${b}_[0-9]*$") + 1 )); step thd_${b}_$r 60 /tmp/rime_$b bench --suite thd --out $W/thd_${b}_$r; step bias_${b}_$r 90 /tmp/rime_$b bench --suite standard --filter "bias=" --out $W/bias_${b}_$r; done; save; cat $W/times.txt; ls $W
