#!/usr/bin/env bash
# Device call L4 (carry .frostA1, .frostB, .device with rime_main = the session's HEAD; records
# held out: hold.sh out 2026-12-08): keeps the first half of FROST's part A and all of part B on
# the machine for L5 (frost_keep_ab, ../2026-12-05-d256/lib.sh).
source docs/gpu-runs/2026-12-05-d256/lib.sh L4
step frost_keep_ab 60 frost_keep_ab
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt; cat $W/frost_keep_ab.txt
