#!/usr/bin/env bash
# Device call T6, right after T5 on the same machine (carry .frostB, .dev3, .device; records held
# out): FROST's part B, then the headdims, standard and d256 suites on cand, FROST (on cand's
# cases.json) and main in turn, and cand's headdims again: FROST / rime in one call.
source docs/gpu-runs/2026-12-05-d256/lib.sh T6
step frost_install_b 120 frost_b
for s in headdims:hd standard:std d256:d256; do
  suite=${s%%:*} p=${s##*:}
  turn $p 90 cand bench --suite $suite
  step frost_$p 200 frost_peer $W/${p}_cand_1/cases.json $W/frost_$p.jsonl 200
  turn $p 90 main bench --suite $suite
done
turn hd 90 cand bench --suite headdims
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt; wc -l $W/frost_*.jsonl
