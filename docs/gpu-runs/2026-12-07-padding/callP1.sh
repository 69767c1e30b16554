#!/usr/bin/env bash
# Device call P1 (carry .device with rime_main = 86344af, rime_bug = 86344af + the NaN-padding
# fill of the sweep, rime_fix = the fix: every load stops at the padding mask's lengths, no
# tensor copies with a padding mask). rime_bug's padding cases show what the sweep now catches
# on the old kernels; rime_fix runs the whole guarded small sweep, memcheck of its padding
# cases, and the standard suite after rime_main (no padding mask there: the RAGGED=0 builds'
# load bound became the lengths, equal to Sq / Skv without a mask). L5 of 2026-12-07-late, on
# the same machine, times main then fix too, with FROST between.
source docs/gpu-runs/2026-12-05-d256/lib.sh P1
step bug_pad 90 /tmp/rime_bug selftest --small --require-gpu --filter padding
step fix_guards 240 /tmp/rime_fix selftest --small --guards --require-gpu
step fix_mem_pad 90 $CS --tool memcheck /tmp/rime_fix selftest --small --require-gpu --filter padding
turn std 90 fix bench --suite standard
turn std 90 main bench --suite standard
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt; tail -qn 3 $W/bug_pad.txt $W/fix_guards.txt $W/fix_mem_pad.txt
