#!/usr/bin/env bash
# Device call C1: rime_fix (5238b40 with one pair_sync instruction for both warps of a pair in
# the split-by-product main kernel; built here, stripped, `xz -T2 -c` into .device/x/) against
# rime_final (5238b40). Carry .device. synccheck of rime_fix on the whole small sweep (B4 found
# divergent threads at the split kernel's named barrier on main and final); the guarded small
# sweep of the two_kernel cases; the split kernel's rows (192/128 and d256 on two_kernel) in the
# order final, fix, fix, final.
source docs/gpu-runs/2026-12-05-d256/lib.sh C1
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step sync_fix_s200 90 $CS --tool synccheck /tmp/rime_fix selftest --small --require-gpu --filter s200
step guards_2k 150 /tmp/rime_fix selftest --small --guards --require-gpu --filter /two_kernel
for b in final fix fix final; do r=$(( $(ls $W | grep -c "^d192_${b}_") + 1 ))
  step d192_${b}_$r 40 /tmp/rime_$b bench --suite standard --filter d192 --route two_kernel --out $W/d192_${b}_$r
  step d256_${b}_$r 40 /tmp/rime_$b bench --suite d256 --route two_kernel --out $W/d256_${b}_$r
done
step sync_fix_all 280 $CS --tool synccheck /tmp/rime_fix selftest --small --require-gpu
save; cat $W/times.txt; tail -n 3 $W/sync_fix_s200.txt $W/guards_2k.txt $W/sync_fix_all.txt
