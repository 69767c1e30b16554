#!/usr/bin/env bash
# Device call J1 (carry .device and .frostA1): the first of three back-to-back calls on one
# machine. Keeps FROST's first carry; times main (629d540) against rime_t1 (the d128 main kernel
# on FROST's 64 x 64 tile with its warp grids (2, 1, 4), V in registers), rime_t2 (the same, K in
# registers too), rime_v4 (the dQ accumulator's layout for one 16-byte reduction a fragment) and
# v4t1 (v4 and t1) on the standard no-bias rows and the sinks suite, in a mirrored order; guarded
# spot checks of each candidate (odd lengths; padded head dims and thd for v4); pick.py names the
# best for J2 and J3 in /tmp/best.
source docs/gpu-runs/2026-12-05-d256/lib.sh J1
step frost_keep 30 frost_keep
for b in main t1 t2 v4 v4t1 v4t1 v4 t2 t1 main; do r=$(( $(ls $W | grep -c "^std_${b}_[0-9]*$") + 1 ))
  step std_${b}_$r 60 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_${b}_$r
  step sinks_${b}_$r 40 /tmp/rime_$b bench --suite sinks --out $W/sinks_${b}_$r
done
step g_v4 60 /tmp/rime_v4 selftest --small --guards --require-gpu --filter s200
step g_v4_pad 30 /tmp/rime_v4 selftest --small --guards --require-gpu --filter pad-d
step g_v4_thd 60 /tmp/rime_v4 selftest --small --guards --require-gpu --filter thd
step g_t1 60 /tmp/rime_t1 selftest --small --guards --require-gpu --filter s200
step g_t2 60 /tmp/rime_t2 selftest --small --guards --require-gpu --filter s200
python3 docs/gpu-runs/2026-12-06-v4/pick.py $W /tmp/best t1 t2 v4 v4t1 > $W/pick.txt 2>&1
save; cat $W/times.txt; cat $W/sha256.txt $W/pick.txt; tail -qn 1 $W/g_*.txt; grep -h "^FAIL" $W/g_*.txt | head -5
