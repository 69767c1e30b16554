#!/usr/bin/env bash
# Device call F2, right after P1 on the same machine (carry .frostA2 only): FROST's part A;
# rime_$1's correctness: the guarded small sweep (every route), determinism, memcheck of the
# odd-length cases.
B=${1:-pre}
source docs/gpu-runs/2026-12-05-d256/lib.sh F2
step frost_install_a 120 frost_a
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step guards 300 /tmp/rime_$B selftest --small --guards --require-gpu
step det 80 /tmp/rime_$B selftest --determinism --small --require-gpu
step mem_s200 90 $CS --tool memcheck /tmp/rime_$B selftest --small --require-gpu --filter s200
save; cat $W/times.txt; tail -n 2 $W/frost_install_a.txt $W/guards.txt $W/det.txt $W/mem_s200.txt
