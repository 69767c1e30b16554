#!/usr/bin/env bash
# Prepared device call G1 (not run): rime_g (main with d192_dkv4.patch: the 192/128 main-kernel
# entry of the atomic and relay routes with FROST's dK / dV warp grid, 4 warps along the KV rows
# instead of 2) against rime_main. Build both (`git apply` in a worktree; release build, strip,
# `xz -T2 -c` into .device/x/rime_main.xz and rime_g.xz); carry .device. Order main, g, g, main:
# the standard suite's 192/128 rows pinned to atomic and on their own routes; then the guarded
# sweep of the 192/128 cases on rime_g.
source docs/gpu-runs/2026-12-05-d256/lib.sh G1
for b in main g g main; do r=$(( $(ls $W | grep -c "^at_${b}_") / 2 + 1 ))
  step at_${b}_$r 60 /tmp/rime_$b bench --suite standard --filter d192 --route atomic --out $W/at_${b}_$r
  step own_${b}_$r 60 /tmp/rime_$b bench --suite standard --filter "d192/128 bias=none" --out $W/own_${b}_$r
done
step guards 120 /tmp/rime_g selftest --small --guards --require-gpu --filter d192v128
save; cat $W/times.txt; tail -n 1 $W/guards.txt
