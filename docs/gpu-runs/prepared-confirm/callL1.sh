#!/usr/bin/env bash
# Device call L1 (carry .device and FROST's first part): the first of three back-to-back calls on
# one machine. Keeps FROST's first carry; racecheck of rime_head (66a9bc2, the 16-byte dQ
# reductions and the convert kernel's row pairs) on the odd-length and thd cases; the d256 suite
# on head and on main of 629d540 (before the 16-byte reductions), order head, main, main, head;
# the 192/128 rows of the standard suite pinned to atomic and to two_kernel on head and main.
source docs/gpu-runs/2026-12-05-d256/lib.sh L1
step frost_keep 30 frost_keep
step race_s200 150 $CS --tool racecheck --racecheck-report all /tmp/rime_head selftest --small --require-gpu --filter s200
step race_thd 150 $CS --tool racecheck --racecheck-report all /tmp/rime_head selftest --small --require-gpu --filter thd
for b in head main main head; do r=$(( $(ls $W | grep -c "^d256_${b}_[0-9]*$") + 1 ))
  step d256_${b}_$r 60 /tmp/rime_$b bench --suite d256 --out $W/d256_${b}_$r
done
for b in head main; do for route in atomic two_kernel; do
  step d192_${b}_$route 90 /tmp/rime_$b bench --suite standard --filter d192 --route $route --out $W/d192_${b}_$route
done; done
save; cat $W/times.txt $W/sha256.txt; tail -qn 2 $W/race_*.txt
