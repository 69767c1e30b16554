#!/usr/bin/env bash
# Device call L2, right after L1 on the same machine (carry .frostA2; records held out): the rest
# of FROST's part A.
source docs/gpu-runs/2026-12-05-d256/lib.sh L2
step frost_install_a 120 frost_a
save; cat $W/times.txt; tail -n 3 $W/frost_install_a.txt
