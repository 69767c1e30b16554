#!/usr/bin/env bash
# Device call L9 (same carry as L8, after it passes): the padding suite (the thd suite's lengths
# padded to 2048 rows under a padding mask) on main's own choices beside the thd suite (the same
# work in two layouts), then pinned to two_kernel (the deterministic route; atomic takes no
# copies) in the order main, cand, main: what the candidate's copies give a padded batch.
source docs/gpu-runs/2026-12-05-d256/lib.sh L9
turn pad 120 main bench --suite padding
turn thd 90 main bench --suite thd
turn pad2k 90 main bench --suite padding --route two_kernel
turn pad2k 90 cand bench --suite padding --route two_kernel
turn pad2k 90 main bench --suite padding --route two_kernel
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt
for d in $W/*_[0-9]; do test -d $d && echo "== $d" && grep -h "^| b" $d/table.md; done
