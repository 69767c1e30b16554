#!/usr/bin/env bash
# Device call N1 (2026-12-07; carry .device and .frostA1), on a fresh machine: the first of
# three back-to-back calls (FROST's install needs all three on one machine). Keeps FROST's first
# half in /tmp and racechecks the 58 thd small cases that M1b's racecheck did not reach (it was
# cut after every d64 and d128 case and 4 of the d192/128 ones): d192/128, d256, the sink case,
# the thd inference cases (the filters overlap M1b's by 4 cases).
source docs/gpu-runs/2026-12-05-d256/lib.sh N1
step frost_keep 30 frost_keep
race() { step race_$1 $2 $CS --tool racecheck --racecheck-report all /tmp/rime_head selftest --small --require-gpu --filter "$3"; }
race thd_d192 200 thd-d192v128
race thd_d256 200 thd-d256
race thd_sink 60 thd-sink
race thd_inference 60 /thd/inference
save; cat $W/times.txt $W/sha256.txt; tail -qn 2 $W/race_*.txt
