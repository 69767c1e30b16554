#!/usr/bin/env bash
# Device call T5, right after T4 on the same machine (carry .frostA2; records held out): the
# rest of FROST's part A.
source docs/gpu-runs/2026-12-05-d256/lib.sh T5
step frost_install_a 120 frost_a
save; cat $W/times.txt; tail -n 3 $W/frost_install_a.txt
