#!/usr/bin/env bash
# Device call B1: rime_final (programmatic dependent launches, the committed tree; built here,
# stripped, `xz -T2 -c` into .device/x/rime_final.xz) beside rime_main (fec8776). Carry .device
# and .frostA1 (FROST's first half, kept in /tmp for B2). Correctness of rime_final: the guarded
# small sweep (every route, every kernel launched programmatically), determinism, memcheck of
# the odd-length cases.
source docs/gpu-runs/2026-12-05-d256/lib.sh B1
cp .frostA1/ir.part00 /tmp/ir.part00 && ls -l /tmp/ir.part00 > $W/s0.txt
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step guards 430 /tmp/rime_final selftest --small --guards --require-gpu
step det 80 /tmp/rime_final selftest --determinism --small --require-gpu
step mem 50 $CS --tool memcheck /tmp/rime_final selftest --small --require-gpu --filter s200
save; cat $W/times.txt; tail -n 2 $W/guards.txt $W/det.txt $W/mem.txt
