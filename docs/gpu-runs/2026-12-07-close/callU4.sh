#!/usr/bin/env bash
# Device call U4 (after U2 lost its machine before its first step; carry .frostA1, .frostA2 and
# .device): FROST's part A again on the fresh machine, then headdims_suite.json on rime_cand and
# rime_head (U5 follows on the same machine).
source docs/gpu-runs/2026-12-05-d256/lib.sh U4
HD="--suites docs/gpu-runs/2026-12-07-close/headdims_suite.json --suite headdims"
step frost_keep 30 frost_keep
step frost_install_a 120 frost_a
turn hd 60 cand bench $HD
turn hd 60 head bench $HD
save; cat $W/times.txt $W/sha256.txt
