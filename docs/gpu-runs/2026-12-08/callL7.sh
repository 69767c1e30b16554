#!/usr/bin/env bash
# Device call L7 (carry .device; no FROST, no hold needed): what the padding fix (290f764) has
# not had on a GPU. The full sweep's padding cases with guards (gqa-causal-bias-padding is
# outside --small), the determinism table (20 runs a route; three padded padding-mask rows since
# 2026-12-08, their padding NaN), racecheck and synccheck of the small d64 padding cases.
source docs/gpu-runs/2026-12-05-d256/lib.sh L7
step pad_full 150 /tmp/rime_main selftest --guards --require-gpu --filter padding
step det 150 /tmp/rime_main selftest --determinism --repeats 20 --require-gpu
step race_pad 120 $CS --tool racecheck --error-exitcode 9 /tmp/rime_main selftest --small --require-gpu --filter d64v64-padding
step sync_pad 90 $CS --tool synccheck --error-exitcode 9 /tmp/rime_main selftest --small --require-gpu --filter d64v64-padding
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt; tail -qn 2 $W/pad_full.txt $W/det.txt $W/race_pad.txt $W/sync_pad.txt
