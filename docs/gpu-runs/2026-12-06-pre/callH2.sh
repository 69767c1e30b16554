#!/usr/bin/env bash
# Device call H2, right after H1 on the same machine (carry .frostA2 only): FROST's part A;
# rime_cg's (both of H1's changes) correctness: the guarded small sweep (every route),
# determinism, memcheck of the odd-length and thd cases, racecheck of the odd-length ones.
source docs/gpu-runs/2026-12-05-d256/lib.sh H2
step frost_install_a 120 frost_a
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step guards 300 /tmp/rime_cg selftest --small --guards --require-gpu
step det 80 /tmp/rime_cg selftest --determinism --small --require-gpu
step mem_s200 60 $CS --tool memcheck /tmp/rime_cg selftest --small --require-gpu --filter s200
step mem_thd 60 $CS --tool memcheck /tmp/rime_cg selftest --small --require-gpu --filter thd
step race_s200 100 $CS --tool racecheck /tmp/rime_cg selftest --small --require-gpu --filter s200
save; cat $W/times.txt; tail -qn 2 $W/frost_install_a.txt $W/guards.txt $W/det.txt $W/mem_*.txt $W/race_s200.txt
