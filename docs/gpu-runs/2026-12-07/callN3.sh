#!/usr/bin/env bash
# Device call N3, right after N2 on the same machine (carry .frostB and .dev3): FROST's part B;
# FROST measured twice against rime_head in one call on the standard suite's no-bias rows and the
# sinks suite, interleaved head, FROST, head, FROST, head (J3's FROST / rime of 1.159 and 1.186
# rest on one FROST run); then the d256 suite on head and FROST on its cases.
source docs/gpu-runs/2026-12-05-d256/lib.sh N3
step frost_install_b 120 frost_b
head_rows() { turn std 60 head bench --suite standard --filter "bias=none"; turn sinks 40 head bench --suite sinks; }
for f in 1 2; do head_rows
  step frost_std_$f 150 frost_peer $W/std_head_1/cases.json $W/frost_std_$f.jsonl 150
  step frost_sinks_$f 70 frost_peer $W/sinks_head_1/cases.json $W/frost_sinks_$f.jsonl 70
done; head_rows
turn d256 60 head bench --suite d256
step frost_d256 90 frost_peer $W/d256_head_1/cases.json $W/frost_d256.jsonl 90
save; cat $W/times.txt; wc -l $W/frost_*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
