#!/usr/bin/env bash
# Device call J1m (carry .device): what J1 could keep in the last 291 s of the session's device
# time (seven requests got no machine): main, v4, t1, t1, v4, main on the standard suite's
# no-bias rows, then rime_v4's guarded odd-length cases (all four routes, every envelope).
source docs/gpu-runs/2026-12-05-d256/lib.sh J1m
for b in main v4 t1 t1 v4 main; do r=$(( $(ls $W | grep -c "^std_${b}_[0-9]*$") + 1 ))
  step std_${b}_$r 30 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_${b}_$r
done
step g_v4 30 /tmp/rime_v4 selftest --small --guards --require-gpu --filter s200
python3 docs/gpu-runs/2026-12-06-v4/pick.py $W /tmp/best t1 v4 > $W/pick.txt 2>&1
save; cat $W/times.txt $W/sha256.txt $W/pick.txt; tail -qn 1 $W/g_*.txt
