#!/usr/bin/env bash
# Device call L1 (carry .frostA1, .device; records held out): keeps the first half of FROST's
# DSL compiler library on the machine for L2.
source docs/gpu-runs/2026-12-05-d256/lib.sh L1
step frost_keep 60 frost_keep
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt; cat $W/frost_keep.txt
