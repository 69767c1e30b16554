#!/usr/bin/env bash
# Device call V1 (carry .frostA1, .frostA2 and .device with rime_main only; records held out:
# hold.sh out 2026-12-07-day). FROST's part A (V2 follows on the same machine), then the
# prepared W1 (docs/gpu-runs/prepared-h200-routes/callW1.sh, same steps): the 12 thd-pad sweep
# cases never run on a GPU, with guards, then the standard suite on the model's own choices and
# pinned to atomic and to two_kernel, in the order own, atomic, two_kernel, two_kernel, atomic,
# own; last, memcheck of the thd-pad cases (last so that a call cut at its limit keeps the rest).
source docs/gpu-runs/2026-12-05-d256/lib.sh V1
step frost_keep 30 frost_keep
step frost_install_a 120 frost_a
step thd_pad 120 /tmp/rime_main selftest --small --guards --require-gpu --filter thd-pad
turn std 80 main bench --suite standard
turn std_atomic 80 main bench --suite standard --route atomic
turn std_2k 80 main bench --suite standard --route two_kernel
turn std_2k 80 main bench --suite standard --route two_kernel
turn std_atomic 80 main bench --suite standard --route atomic
turn std 80 main bench --suite standard
step mem_thd_pad 100 $CS --tool memcheck --error-exitcode 9 /tmp/rime_main selftest --small --require-gpu --filter thd-pad
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt; tail -n 3 $W/thd_pad.txt $W/mem_thd_pad.txt
