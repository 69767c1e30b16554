#!/usr/bin/env bash
# Device call A, on a fresh machine (carry .device and .frostA1): the first half of FROST's
# compiler library into /tmp for B, then the correctness guards of candidate rime_d64k
# (../prepared-d64-kv-regs/): the small sweep's d64v64 and pad-d40 cases on every route, bf16
# and fp16, with guard zones, and the determinism table.
source docs/gpu-runs/2026-12-05-d256/lib.sh A
cp .frostA1/ir.part00 /tmp/ir.part00 && ls -l /tmp/ir.part00 > $W/s0.txt
step guards_d64k 200 /tmp/rime_d64k selftest --small --guards --require-gpu --filter d64v64
step guards_d40_d64k 80 /tmp/rime_d64k selftest --small --guards --require-gpu --filter pad-d40
step det_d64k 80 /tmp/rime_d64k selftest --determinism --small
save; cat $W/times.txt; tail -qn 1 $W/guards_*.txt; tail -qn 2 $W/det_*.txt
