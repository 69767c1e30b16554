#!/usr/bin/env bash
# Device call U1 (2026-12-07; carry .frostA1, .frostA2 and .device with .device/x/rime_head.xz,
# the records held out), the first of two back-to-back calls on one machine (FROST's install
# needs both). rime_head: stripped release build of rime-cli at b99d1cc (kernels of 50c6b4a).
# FROST's part A; the guarded small sweep's fp16 half (T1 ran the bf16 half on these kernels);
# the thd suite with torch's varlen backward on the same cases (head, torch, head).
source docs/gpu-runs/2026-12-05-d256/lib.sh U1
step frost_keep 30 frost_keep
step frost_install_a 120 frost_a
step guards_f16 240 /tmp/rime_head selftest --small --guards --require-gpu --filter /f16/
turn thd 90 head bench --suite thd
step torch_thd 200 python3 benches/torch_varlen_thd_bwd.py $W/thd_head_1/cases.json
turn thd 90 head bench --suite thd
save; cat $W/times.txt $W/sha256.txt; tail -qn 2 $W/frost_install_a.txt $W/guards_f16.txt
