#!/usr/bin/env bash
# Device call L1b (carry .device and FROST's first part), written 2026-12-06 22:45 UTC in place
# of callL1.sh when failed starts had left 1,244 s of device time: M3b already ran the 192/128
# rows pinned to each route on rime_head and 26 of the 32 odd-length racecheck cases, so this
# first of the three back-to-back calls keeps FROST's first carry, racechecks the 8 cases M3b
# did not reach (d256, bf16 and f16) and the thd cases, and times the d256 suite on head and on
# main of 629d540, order head, main, main, head. callL2.sh and callL3.sh follow unchanged.
source docs/gpu-runs/2026-12-05-d256/lib.sh L1
step frost_keep 30 frost_keep
step race_d256_s200 120 $CS --tool racecheck --racecheck-report all /tmp/rime_head selftest --small --require-gpu --filter d256v256-causal-bcast-dbias-s200
step race_thd 150 $CS --tool racecheck --racecheck-report all /tmp/rime_head selftest --small --require-gpu --filter thd
for b in head main main head; do r=$(( $(ls $W | grep -c "^d256_${b}_[0-9]*$") + 1 ))
  step d256_${b}_$r 60 /tmp/rime_$b bench --suite d256 --out $W/d256_${b}_$r
done
save; cat $W/times.txt $W/sha256.txt; tail -qn 2 $W/race_*.txt
