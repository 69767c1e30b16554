#!/usr/bin/env bash
# Device call H1 (carry .device and .frostA1): the first of three back-to-back calls on one
# machine. Keeps FROST's first carry, then the timing parts of the prepared calls C1 (rime_cv:
# the 4-vector convert and 32-row preprocess kernels) and G1 (rime_g: the 192/128 fused-dQ
# entry with dK / dV warp grid (2, 4, 2)) against rime_main (629d540); their guarded sweeps
# move to H2, which runs them on rime_cg (both changes together).
source docs/gpu-runs/2026-12-05-d256/lib.sh H1
step frost_keep 30 frost_keep
for b in main cv cv main; do r=$(( $(ls $W | grep -c "^std_${b}_") / 2 + 1 ))
  step std_${b}_$r 60 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_${b}_$r
  step sinks_${b}_$r 40 /tmp/rime_$b bench --suite sinks --out $W/sinks_${b}_$r
  step thd_${b}_$r 60 /tmp/rime_$b bench --suite thd --out $W/thd_${b}_$r
done
for f in "b8 h16/16 s1024x1024 d64 bias=none bf16" "b4 h16/16 s2048x2048 d128 bias=none bf16"; do
  n=$(echo "$f" | tr -c 'a-z0-9' '_' | cut -c1-28)
  step kt_cv_$n 60 ncu --clock-control none -k regex:"preprocess|convert" --metrics gpu__time_duration.sum,dram__bytes.sum /tmp/rime_cv bench --suite standard --filter "$f" --warmup 0 --iters 1 --out $W/kt_cv_$n
done
for b in main g g main; do r=$(( $(ls $W | grep -c "^at_${b}_") / 2 + 1 ))
  step at_${b}_$r 60 /tmp/rime_$b bench --suite standard --filter d192 --route atomic --out $W/at_${b}_$r
  step own_${b}_$r 60 /tmp/rime_$b bench --suite standard --filter "d192/128 bias=none" --out $W/own_${b}_$r
done
save; cat $W/times.txt; cat $W/sha256.txt; grep -hE "rime_|duration|dram" $W/kt_*.txt | grep -v PROF
