#!/usr/bin/env bash
# Device call L8 (carry .device with rime_main = HEAD and rime_cand = HEAD + padding_copies.patch;
# no hold needed): is the candidate correct? Tensor copies under a padding mask, the landed
# padding rows zeroed in shared memory (zero_padding_rows in bwd_main.cu). The whole guarded
# small sweep (its padding cases' padding is NaN: a row left unzeroed makes the real rows NaN),
# how many padding cases ran with copies, and memcheck / racecheck / synccheck of padding cases
# that take copies (no bias, two_kernel; d128 and 192/128).
source docs/gpu-runs/2026-12-05-d256/lib.sh L8
step sweep 300 /tmp/rime_cand selftest --small --guards --require-gpu
grep -- "-padding-" $W/sweep.txt | grep -c "tensor copies" > $W/pad_copies.txt
step mem 60 $CS --tool memcheck --error-exitcode 9 /tmp/rime_cand selftest --small --require-gpu --filter d128v128-padding-br-causal
step race 90 $CS --tool racecheck --error-exitcode 9 /tmp/rime_cand selftest --small --require-gpu --filter d192v128-padding-br-causal
step sync 60 $CS --tool synccheck --error-exitcode 9 /tmp/rime_cand selftest --small --require-gpu --filter d128v128-padding-br-causal
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt; cat $W/pad_copies.txt; tail -qn 2 $W/sweep.txt $W/mem.txt $W/race.txt $W/sync.txt
