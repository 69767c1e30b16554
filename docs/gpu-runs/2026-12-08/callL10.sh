#!/usr/bin/env bash
# Device call L10 (same carry as L8): what the candidate's kernels cost graphs without a padding
# mask (its TMA builds' registers moved 0 to -8 on sm_120): the standard and headdims suites'
# no-bias rows pinned to two_kernel, main then cand.
source docs/gpu-runs/2026-12-05-d256/lib.sh L10
turn std 120 main bench --suite standard --route two_kernel --filter bias=none
turn std 90 cand bench --suite standard --route two_kernel --filter bias=none
turn hd 90 main bench --suite headdims --route two_kernel --filter bias=none
turn hd 90 cand bench --suite headdims --route two_kernel --filter bias=none
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt
for d in $W/*_[0-9]; do test -d $d && echo "== $d" && grep -h "^| b" $d/table.md; done
