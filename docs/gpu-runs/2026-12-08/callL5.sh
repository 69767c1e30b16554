#!/usr/bin/env bash
# Device call L5, right after L4 on the same machine (carry .frostA2, .dev3, .device; records
# held out). Installs FROST (frost_ab), then FROST and rime in one call on the suites holding the
# rows FROST still won or tied before the tensor copies (issue 16): headdims as main, FROST (on
# main's cases.json), main again (so each FROST row has a rime run before and after it), then
# d256 as main, FROST. L6 follows with the standard suite.
source docs/gpu-runs/2026-12-05-d256/lib.sh L5
step frost_install 150 frost_ab
turn hd 150 main bench --suite headdims
step frost_hd 170 frost_peer $W/hd_main_1/cases.json $W/frost_hd.jsonl 170
turn hd 90 main bench --suite headdims
turn d256 60 main bench --suite d256
step frost_d256 100 frost_peer $W/d256_main_1/cases.json $W/frost_d256.jsonl 100
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt; wc -l $W/frost_*.jsonl
