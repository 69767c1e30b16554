#!/usr/bin/env bash
# Device call M3 (carry .device): the last ~100 s of the session's device time (2026-12-06
# 21:25 UTC, after failed starts). Racecheck of rime_head on the odd-length cases (the 16-byte
# dQ reductions were never racechecked), then the 192/128 standard rows on head pinned to
# two_kernel (the cost model's choice) and to atomic.
source docs/gpu-runs/2026-12-05-d256/lib.sh M3
step race_s200 90 $CS --tool racecheck --racecheck-report all /tmp/rime_head selftest --small --require-gpu --filter s200
for route in two_kernel atomic; do
  step d192_head_$route 30 /tmp/rime_head bench --suite standard --filter d192 --route $route --out $W/d192_head_$route
done
save; cat $W/times.txt $W/sha256.txt; tail -qn 3 $W/race_s200.txt
