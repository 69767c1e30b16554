#!/usr/bin/env bash
# Device call N1 (2026-12-07; carry .frostA1, .frostA2 and .device/x/rime_head.xz, with the
# record folders held out: ~65 MB of the 64 MiB), on a fresh machine: the first of two
# back-to-back calls (FROST's install needs both on one machine). FROST's part A whole; then the
# racecheck of the 58 thd small cases that M1b's racecheck did not reach (it was cut after every
# d64 and d128 case and 4 of the d192/128 ones): d192/128, d256, the sink case, the thd
# inference cases (the filters repeat 4 of M1b's cases).
source docs/gpu-runs/2026-12-05-d256/lib.sh N1
step frost_keep 30 frost_keep
step frost_install_a 120 frost_a
race() { step race_$1 $2 $CS --tool racecheck --racecheck-report all /tmp/rime_head selftest --small --require-gpu --filter "$3"; }
race thd_d192 200 thd-d192v128
race thd_d256 200 thd-d256
race thd_sink 60 thd-sink
race thd_inference 60 /thd/inference
save; cat $W/times.txt $W/sha256.txt; tail -qn 2 $W/frost_install_a.txt $W/race_*.txt
