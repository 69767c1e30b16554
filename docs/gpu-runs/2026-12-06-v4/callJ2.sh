#!/usr/bin/env bash
# Device call J2, right after J1 on the same machine (carry .frostA2 only; the binaries are
# J1's, still in /tmp): FROST's part A; the correctness of J1's best candidate (/tmp/best): the
# guarded small sweep (every route), determinism, memcheck of the odd-length and thd cases, and
# racecheck of the odd-length ones where the candidate changes the main kernel's tiles.
source docs/gpu-runs/2026-12-05-d256/lib.sh J2
step frost_install_a 120 frost_a
B=$(cat /tmp/best); echo "$B" > $W/best.txt
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step guards 300 /tmp/rime_$B selftest --small --guards --require-gpu
step det 80 /tmp/rime_$B selftest --determinism --small --require-gpu
step mem_s200 60 $CS --tool memcheck /tmp/rime_$B selftest --small --require-gpu --filter s200
step mem_thd 60 $CS --tool memcheck /tmp/rime_$B selftest --small --require-gpu --filter thd
case $B in *t*) step race_s200 100 $CS --tool racecheck /tmp/rime_$B selftest --small --require-gpu --filter s200;; esac
save; cat $W/times.txt $W/best.txt; tail -qn 2 $W/frost_install_a.txt $W/guards.txt $W/det.txt $W/mem_*.txt $W/race_*.txt 2>/dev/null
