#!/usr/bin/env bash
# Device call T1, run 2026-12-07 12:56-13:02 UTC on one H100 (carry .device: rime_main = 834bdfe,
# main before this work; rime_tma = c95c72c, copies in the split kernels, not used; rime_tma2 =
# 834bdfe + tma2.patch, copies also in the kernels with two dO buffers, no bias; records held out:
# hold.sh out 2026-12-07-tma). In order of priority: the guarded small sweep on rime_tma2 (every
# case: the no-bias split and two-dO-buffer cases run the tensor copies, the rest are controls),
# then the no-bias rows of the headdims, standard and d256 suites in turn on main and tma2, then
# memcheck of every envelope's plain cases on tma2 (as run, that step read `--filter -plain/`,
# which clap took for a flag, and did not run; fixed here as in T2, which ran it).
source docs/gpu-runs/2026-12-05-d256/lib.sh T1
step sweep 220 /tmp/rime_tma2 selftest --small --guards --require-gpu
for b in main tma2 tma2 main; do turn hd 60 $b bench --suite headdims --filter bias=none; done
for b in main tma2 tma2 main; do turn std 60 $b bench --suite standard --filter bias=none; done
for b in tma2 main; do turn d256 40 $b bench --suite d256 --filter bias=none; done
step mem_plain 90 $CS --tool memcheck --error-exitcode 9 /tmp/rime_tma2 selftest --small --require-gpu --filter=-plain/
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt
tail -n 2 $W/sweep.txt $W/mem_plain.txt; grep -c "tensor copies" $W/sweep.txt; grep FAIL $W/sweep.txt | head
