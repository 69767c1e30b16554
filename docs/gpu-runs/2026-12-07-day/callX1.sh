#!/usr/bin/env bash
# Device call X1 (carry .device with rime_new = 721f7e8, the (32, 32) and (192, 192) envelopes,
# and rime_main = 16b7155, V1-V4's binary; records held out: hold.sh out 2026-12-07-day). No
# FROST (its two calls did not fit the device time left): FROST / rime_new on the padded dims
# is V2's FROST / rime_main times this call's rime_main / rime_new, a cross-call estimate.
# In order of priority (the call may be cut at the session's device time): the guarded sweep's
# cases of the two new envelopes (both io types, every route), headdims on new, main, main,
# new, then new pinned to atomic and to two_kernel, the edge cases (D = 8 now pads to 32),
# memcheck of the d192 and d32 sweep cases.
source docs/gpu-runs/2026-12-05-d256/lib.sh X1
for f in d32v32 d192v192 pad-d24v16 pad-d136v176; do
  step sweep_$f 150 /tmp/rime_new selftest --small --guards --require-gpu --filter $f
done
HD="--suites docs/gpu-runs/2026-12-07-day/headdims_suite.json --suite headdims"
turn hd 60 new bench $HD
turn hd 60 main bench $HD
turn hd 60 main bench $HD
turn hd 60 new bench $HD
turn hd_atomic 60 new bench $HD --route atomic
turn hd_2k 60 new bench $HD --route two_kernel
step edge 60 /tmp/rime_new selftest --edge --require-gpu
step mem_d192 90 $CS --tool memcheck --error-exitcode 9 /tmp/rime_new selftest --small --require-gpu --filter d192v192
step mem_d32 60 $CS --tool memcheck --error-exitcode 9 /tmp/rime_new selftest --small --require-gpu --filter d32v32
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt
for f in $W/sweep_*.txt $W/edge.txt $W/mem_*.txt; do echo "== $f"; tail -n 2 $f; done
