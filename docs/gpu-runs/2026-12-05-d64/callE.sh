#!/usr/bin/env bash
# Device call E, on a fresh machine (carry .device and .frostA1): FROST's first half into /tmp,
# then the correctness of rime_db (dbias_reduce.cu reads only the rows the main kernel walked;
# the main kernel no longer zeroes every skipped dS row for it): the small sweep's two_kernel
# cases with guards, every broadcast-dBias case of the full sweep with guards (all routes), the
# determinism table.
source docs/gpu-runs/2026-12-05-d256/lib.sh E
cp .frostA1/ir.part00 /tmp/ir.part00 && ls -l /tmp/ir.part00 > $W/s0.txt
step guards_2k 200 /tmp/rime_db selftest --small --guards --require-gpu --filter two_kernel
step guards_bcast 200 /tmp/rime_db selftest --guards --require-gpu --filter bcast
step det 80 /tmp/rime_db selftest --determinism --small
save; cat $W/times.txt; tail -qn 1 $W/guards_*.txt; tail -qn 2 $W/det.txt
