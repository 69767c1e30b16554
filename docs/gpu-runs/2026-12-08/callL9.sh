#!/usr/bin/env bash
# Device call L9, after L8 passes (same carry): what the candidate's tensor copies give a padded
# batch under a padding mask, two_kernel pinned (the deterministic route; atomic takes no copies)
# on the padding suite in the order main, cand, main; and what its kernels cost graphs without a
# mask (the TMA builds' registers moved 0 to -8 on sm_120), the standard and headdims suites'
# no-bias rows on two_kernel, main then cand.
source docs/gpu-runs/2026-12-05-d256/lib.sh L9
turn pad 120 main bench --suite padding --route two_kernel
turn pad 90 cand bench --suite padding --route two_kernel
turn pad 90 main bench --suite padding --route two_kernel
turn std 90 main bench --suite standard --route two_kernel --filter bias=none
turn std 90 cand bench --suite standard --route two_kernel --filter bias=none
turn hd 90 main bench --suite headdims --route two_kernel --filter bias=none
turn hd 90 cand bench --suite headdims --route two_kernel --filter bias=none
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt
for d in $W/*_1 $W/*_2 $W/*_3; do test -d $d && echo "== $d" && grep -h "^| b" $d/table.md; done
