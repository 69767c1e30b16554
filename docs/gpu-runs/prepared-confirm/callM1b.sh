#!/usr/bin/env bash
# Device call M1b (carry .device only; no FROST), written 2026-12-06 22:55 UTC for when failed
# starts leave too little device time for L1b-L3's three calls: callM1.sh less what M3b ran (the
# 192/128 rows pinned to each route on head, 26 of 32 odd-length racecheck cases), correctness
# first. rime_head: guarded small sweep, determinism, memcheck of the odd-length and thd cases,
# racecheck of the 8 d256 odd-length cases M3b did not reach; d256 on head and main, order head,
# main, main, head; standard no-bias and sinks on head, v4, head; racecheck of the thd cases.
source docs/gpu-runs/2026-12-05-d256/lib.sh M1b
step guards 240 /tmp/rime_head selftest --small --guards --require-gpu
step det 60 /tmp/rime_head selftest --determinism --small --require-gpu
step mem_s200 60 $CS --tool memcheck /tmp/rime_head selftest --small --require-gpu --filter s200
step mem_thd 60 $CS --tool memcheck /tmp/rime_head selftest --small --require-gpu --filter thd
step race_d256_s200 90 $CS --tool racecheck --racecheck-report all /tmp/rime_head selftest --small --require-gpu --filter d256v256-causal-bcast-dbias-s200
for b in head main main head; do r=$(( $(ls $W | grep -c "^d256_${b}_[0-9]*$") + 1 ))
  step d256_${b}_$r 45 /tmp/rime_$b bench --suite d256 --out $W/d256_${b}_$r
done
for b in head v4 head; do r=$(( $(ls $W | grep -c "^std_${b}_[0-9]*$") + 1 ))
  step std_${b}_$r 45 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_${b}_$r
  step sinks_${b}_$r 30 /tmp/rime_$b bench --suite sinks --out $W/sinks_${b}_$r
done
step race_thd 150 $CS --tool racecheck --racecheck-report all /tmp/rime_head selftest --small --require-gpu --filter thd
save; cat $W/times.txt $W/sha256.txt; tail -qn 2 $W/race_*.txt $W/guards.txt $W/det.txt $W/mem_*.txt
