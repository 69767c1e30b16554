#!/usr/bin/env bash
# Device call L4 (carry .frostA1, .frostB, .device; records held out: hold.sh out
# 2026-12-07-padding; prepared in ../2026-12-07-late): keeps the first half of FROST's part A and all of part B on the machine for
# L5, so that FROST takes two back-to-back calls instead of three (frost_keep_ab, lib.sh). Tried
# 2026-12-07 at 20:37 UTC: no machine was lent; again from 23:27 UTC (fourth session). L1 (the three-call form's first) ran at 18:41
# UTC, but that machine was gone before its second call.
source docs/gpu-runs/2026-12-05-d256/lib.sh L4
step frost_keep_ab 60 frost_keep_ab
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt; cat $W/frost_keep_ab.txt
