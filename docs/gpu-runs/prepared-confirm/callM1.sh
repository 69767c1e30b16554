#!/usr/bin/env bash
# Device call M1 (carry .device), written 2026-12-06 20:30 UTC when no machine had come for an
# hour and 1,021 s of the session's device time had gone to failed starts: L1-L3 (FROST's three
# back-to-back calls) no longer fit, so this one call runs their steps that need no FROST, most
# valuable first, the least known last (the call stops at its limit; every step is saved as it
# ends). rime_head: racecheck of the odd-length cases, guarded small sweep, determinism,
# memcheck; the 192/128 standard rows pinned to atomic and two_kernel on head and main; d256 on
# head and main; standard no-bias and sinks on head, v4, head; racecheck of the thd cases.
source docs/gpu-runs/2026-12-05-d256/lib.sh M1
step race_s200 150 $CS --tool racecheck --racecheck-report all /tmp/rime_head selftest --small --require-gpu --filter s200
step guards 240 /tmp/rime_head selftest --small --guards --require-gpu
step det 60 /tmp/rime_head selftest --determinism --small --require-gpu
step mem_s200 60 $CS --tool memcheck /tmp/rime_head selftest --small --require-gpu --filter s200
step mem_thd 60 $CS --tool memcheck /tmp/rime_head selftest --small --require-gpu --filter thd
for b in head main; do for route in atomic two_kernel; do
  step d192_${b}_$route 60 /tmp/rime_$b bench --suite standard --filter d192 --route $route --out $W/d192_${b}_$route
done; done
for b in head main main head; do r=$(( $(ls $W | grep -c "^d256_${b}_[0-9]*$") + 1 ))
  step d256_${b}_$r 45 /tmp/rime_$b bench --suite d256 --out $W/d256_${b}_$r
done
for b in head v4 head; do r=$(( $(ls $W | grep -c "^std_${b}_[0-9]*$") + 1 ))
  step std_${b}_$r 45 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_${b}_$r
  step sinks_${b}_$r 30 /tmp/rime_$b bench --suite sinks --out $W/sinks_${b}_$r
done
step race_thd 150 $CS --tool racecheck --racecheck-report all /tmp/rime_head selftest --small --require-gpu --filter thd
save; cat $W/times.txt $W/sha256.txt; tail -qn 2 $W/race_*.txt $W/guards.txt $W/det.txt $W/mem_*.txt
