#!/usr/bin/env bash
# Device call U1 (2026-12-07; carry .frostA1, .frostA2 and .device with .device/x/rime_cand.xz and
# rime_head.xz, the records held out), the first of two back-to-back calls on one machine
# (FROST's install needs both). rime_head: b99d1cc (kernels of 50c6b4a); rime_cand: the same
# kernels with RTE002 retired (two_kernel takes padded head dims). FROST's part A; the guarded
# small sweep on rime_cand, both io types (T1 ran bf16 only on these kernels; the 5 padded
# two_kernel cases run for the first time); memcheck of the padded cases; the determinism
# table; the edge cases (D = 8, padded: two_kernel's first run of them); the thd suite with torch's varlen backward on the same cases.
source docs/gpu-runs/2026-12-05-d256/lib.sh U1
step frost_keep 30 frost_keep
step frost_install_a 120 frost_a
step guards 300 /tmp/rime_cand selftest --small --guards --require-gpu
step mem_pad 90 $CS --tool memcheck /tmp/rime_cand selftest --small --require-gpu --filter pad-
step det 60 /tmp/rime_cand selftest --determinism --small --require-gpu
step edge 60 /tmp/rime_cand selftest --edge --require-gpu  # D = 8: every case padded, two_kernel now runs them too
turn thd 60 cand bench --suite thd
step torch_thd 120 python3 benches/torch_varlen_thd_bwd.py $W/thd_cand_1/cases.json
save; cat $W/times.txt $W/sha256.txt; tail -qn 2 $W/frost_install_a.txt $W/guards.txt $W/mem_pad.txt $W/det.txt $W/edge.txt
