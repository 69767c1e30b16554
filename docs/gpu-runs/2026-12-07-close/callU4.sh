#!/usr/bin/env bash
# Device call U4 (after U2 lost its machine before its first step; carry .frostA1 and .frostA2
# only: with .device too the tool refused the carry as over 64 MiB): FROST's part A again on
# the fresh machine. U5 follows on the same machine.
source docs/gpu-runs/2026-12-05-d256/lib.sh U4
step frost_keep 30 frost_keep
step frost_install_a 120 frost_a
save; cat $W/times.txt; tail -n 2 $W/frost_install_a.txt
