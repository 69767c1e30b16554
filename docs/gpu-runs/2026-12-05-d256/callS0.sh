#!/usr/bin/env bash
# Device call S0, on a fresh machine: the first half of FROST's compiler library into /tmp (carry
# .frostA1 alone: with .frostA2 beside this 16 MB checkout the carry passes 64 MiB), for S1.
source docs/gpu-runs/2026-12-05-d256/lib.sh S0
cp .frostA1/ir.part00 /tmp/ir.part00 && ls -l /tmp/ir.part00 /tmp/rime_* | tee $W/s0.txt; save
