#!/usr/bin/env bash
# Device call V1: rime_v, the committed tree (12b55ed; built here, stripped, `xz -T2 -c` into
# .device/x/rime_v.xz; carry .device; the same binary as C1's rime_fix, sha256 8a91d1ff…):
# racecheck and memcheck of the 192/128 and d256 small cases (the split kernels' pair barrier
# moved).
source docs/gpu-runs/2026-12-05-d256/lib.sh V1
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step race192 90 $CS --tool racecheck --racecheck-report all /tmp/rime_v selftest --small --require-gpu --filter d192v128-causal
step race256 90 $CS --tool racecheck --racecheck-report all /tmp/rime_v selftest --small --require-gpu --filter d256v256-causal
step mem192 90 $CS --tool memcheck /tmp/rime_v selftest --small --require-gpu --filter d192v128
step mem256 90 $CS --tool memcheck /tmp/rime_v selftest --small --require-gpu --filter d256v256
save; cat $W/times.txt; tail -n 2 $W/race192.txt $W/race256.txt $W/mem192.txt $W/mem256.txt
