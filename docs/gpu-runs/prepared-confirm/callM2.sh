#!/usr/bin/env bash
# Device call M2 (carry .device): M1 cut to what ~200 s hold, written 2026-12-06 21:11 UTC when
# failed starts had left 389 s of device time. Racecheck of rime_head on the odd-length cases
# (the 16-byte dQ reductions were never racechecked); the 192/128 standard rows pinned to atomic
# and two_kernel on head and main (is the cost model's choice stale?); d256 on head and main;
# determinism and memcheck; the guarded small sweep last (J1-J2 ran it on rime_v4).
source docs/gpu-runs/2026-12-05-d256/lib.sh M2
step race_s200 120 $CS --tool racecheck --racecheck-report all /tmp/rime_head selftest --small --require-gpu --filter s200
for b in head main; do for route in atomic two_kernel; do
  step d192_${b}_$route 40 /tmp/rime_$b bench --suite standard --filter d192 --route $route --out $W/d192_${b}_$route
done; done
for b in head main; do step d256_${b}_1 30 /tmp/rime_$b bench --suite d256 --out $W/d256_${b}_1; done
step det 40 /tmp/rime_head selftest --determinism --small --require-gpu
step mem_s200 40 $CS --tool memcheck /tmp/rime_head selftest --small --require-gpu --filter s200
step guards 200 /tmp/rime_head selftest --small --guards --require-gpu
save; cat $W/times.txt $W/sha256.txt; tail -qn 2 $W/race_*.txt $W/det.txt $W/mem_*.txt $W/guards.txt
