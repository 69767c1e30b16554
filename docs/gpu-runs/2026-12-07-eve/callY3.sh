#!/usr/bin/env bash
# Device call Y3, right after Y2 on the same machine (carry .frostB, .dev3, .device; records
# held out). FROST's part B; the built-in headdims suite (d32,
# d96, d160, d192, d200; b4 h16 s2048) on main, FROST, main: FROST /
# rime on the (32, 32) and (192, 192) envelopes in one call.
source docs/gpu-runs/2026-12-05-d256/lib.sh Y3
HD="--suite headdims"
step frost_install_b 120 frost_b
turn hd 60 main bench $HD
step frost_hd 200 frost_peer $W/hd_main_1/cases.json $W/frost_hd.jsonl 200
turn hd 60 main bench $HD
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt; wc -l $W/frost_*.jsonl
