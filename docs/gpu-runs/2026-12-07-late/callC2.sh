#!/usr/bin/env bash
# Device call C2, after C1 (same carry): the candidate's determinism table over 20 runs (its
# no-bias two_kernel rows run both kernels' copies), memcheck, racecheck and synccheck of the
# small sweep's plain bf16 BHSD two_kernel cases (the mbarrier ring: a stage refilled before every warp
# has read it would be a race), the edge cases.
source docs/gpu-runs/2026-12-05-d256/lib.sh C2
step det 150 /tmp/rime_cand selftest --determinism --require-gpu --repeats 20
step mem 120 $CS --tool memcheck --error-exitcode 9 /tmp/rime_cand selftest --small --require-gpu --filter -plain/bf16/bhsd/two_kernel
step race 150 $CS --tool racecheck --racecheck-report all --error-exitcode 9 /tmp/rime_cand selftest --small --require-gpu --filter -plain/bf16/bhsd/two_kernel
step sync 120 $CS --tool synccheck --error-exitcode 9 /tmp/rime_cand selftest --small --require-gpu --filter -plain/bf16/bhsd/two_kernel
step edge 60 /tmp/rime_cand selftest --edge --require-gpu
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt
for f in $W/det.txt $W/mem.txt $W/race.txt $W/sync.txt $W/edge.txt; do echo "== $f"; tail -n 2 $f | cut -c1-200; done
