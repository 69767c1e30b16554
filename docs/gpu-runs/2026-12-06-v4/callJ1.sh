#!/usr/bin/env bash
# Device call J1 (carry .device and .frostA1): the first of three back-to-back calls on one
# machine. Keeps FROST's first carry; times main (629d540) against rime_t1 and rime_t2 (the d128
# main kernel on FROST's 64 x 64 tile with its warp grids (2, 1, 4), V in registers, and K too in
# t2), rime_v4 (the dQ accumulator's layout for one 16-byte reduction a fragment) and v4t1,
# v4t2 (both changes) on the standard no-bias rows and the sinks suite, in a mirrored order;
# the thd suite main, v4, v4, main; guarded spot checks of each candidate; pick.py names the
# best for J2 and J3 in /tmp/best.
source docs/gpu-runs/2026-12-05-d256/lib.sh J1
step frost_keep 30 frost_keep
for b in main t1 t2 v4 v4t1 v4t2 v4t2 v4t1 v4 t2 t1 main; do r=$(( $(ls $W | grep -c "^std_${b}_[0-9]*$") + 1 ))
  step std_${b}_$r 60 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_${b}_$r
  step sinks_${b}_$r 40 /tmp/rime_$b bench --suite sinks --out $W/sinks_${b}_$r
done
for b in main v4 v4 main; do r=$(( $(ls $W | grep -c "^thd_${b}_[0-9]*$") + 1 ))
  step thd_${b}_$r 60 /tmp/rime_$b bench --suite thd --out $W/thd_${b}_$r
done
step g_v4 60 /tmp/rime_v4 selftest --small --guards --require-gpu --filter s200
step g_v4_thd 60 /tmp/rime_v4 selftest --small --guards --require-gpu --filter thd
for b in t1 t2 v4t1; do step g_$b 60 /tmp/rime_$b selftest --small --guards --require-gpu --filter d128; done
python3 docs/gpu-runs/2026-12-06-v4/pick.py $W /tmp/best t1 t2 v4 v4t1 v4t2 > $W/pick.txt 2>&1
save; cat $W/times.txt; cat $W/sha256.txt $W/pick.txt; tail -qn 1 $W/g_*.txt; grep -h "^FAIL" $W/g_*.txt | head -5
