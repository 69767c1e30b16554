#!/usr/bin/env bash
# Device call U6 (carry .device): the session's device time left no room for FROST's two calls
# after three more failed starts, so the padded head dims are timed rime against rime only:
# headdims_suite.json (40 rows) on rime_cand (two_kernel allowed for padded dims) and rime_head
# (atomic / relay), order cand, head, head, cand.
source docs/gpu-runs/2026-12-05-d256/lib.sh U6
HD="--suites docs/gpu-runs/2026-12-07-close/headdims_suite.json --suite headdims"
for b in cand head head cand; do turn hd 90 $b bench $HD; done
save; cat $W/times.txt $W/sha256.txt
