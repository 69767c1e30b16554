#!/usr/bin/env bash
# Device call L2, right after L1 on the same machine (carry FROST's second part only; the
# binaries are L1's, still in /tmp): FROST's part A; correctness of rime_head: the guarded small
# sweep (every route), determinism, memcheck of the odd-length and thd cases.
source docs/gpu-runs/2026-12-05-d256/lib.sh L2
step frost_install_a 120 frost_a
step guards 300 /tmp/rime_head selftest --small --guards --require-gpu
step det 80 /tmp/rime_head selftest --determinism --small --require-gpu
step mem_s200 60 $CS --tool memcheck /tmp/rime_head selftest --small --require-gpu --filter s200
step mem_thd 60 $CS --tool memcheck /tmp/rime_head selftest --small --require-gpu --filter thd
save; cat $W/times.txt; tail -qn 2 $W/frost_install_a.txt $W/guards.txt $W/det.txt $W/mem_*.txt
