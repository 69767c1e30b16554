#!/usr/bin/env bash
# Device call T4 (2026-12-07, second session; carry .device with rime_main = main 57afbf2 and
# rime_cand = main + tma3.patch with the tensor copies on two_kernel only, and .frostA1; records
# held out: hold.sh out 2026-12-07-tma). T3 timed tma3 (copies on every route) 0.92-0.98 of
# main's time on two_kernel but 1.015 on the d128 atomic rows, so the candidate takes them on
# two_kernel alone. The first of three back-to-back calls: FROST's first half, then the
# candidate's correctness: the determinism table over 20 runs (its no-bias rows run the copies on
# two_kernel), synccheck of the plain cases, the small sweep's two_kernel cases with guards (the
# only route whose builds take copies: the others run TMA_TILES=0 builds, whose sm_120 SASS matched
# main's in the builds compared, README), the edge cases.
source docs/gpu-runs/2026-12-05-d256/lib.sh T4
step frost_keep 30 frost_keep
step det 150 /tmp/rime_cand selftest --determinism --require-gpu --repeats 20
step sync_plain 90 $CS --tool synccheck --error-exitcode 9 /tmp/rime_cand selftest --small --require-gpu --filter=-plain/bf16
step sweep 150 /tmp/rime_cand selftest --small --guards --require-gpu --filter two_kernel
step edge 60 /tmp/rime_cand selftest --edge --require-gpu
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt
for f in $W/det.txt $W/sync_plain.txt $W/sweep.txt $W/edge.txt; do echo "== $f"; tail -n 2 $f | cut -c1-200; done
echo "copies: $(grep -c 'tensor copies' $W/sweep.txt) of $(grep -c '^PASS\|^FAIL' $W/sweep.txt); off two_kernel: $(grep 'tensor copies' $W/sweep.txt | grep -vc '/two_kernel ')"
