#!/usr/bin/env bash
# Device call F5, right after F1 on the same machine (carry .device; records held out). F1's
# instruction counts fell 4-5% with the whole-tile copy path but the d192 kernels' times did not;
# before F2-F4 (FROST), whether any row moves: the standard suite on rime_fast, rime_main,
# rime_main, rime_fast, and the headdims suite on rime_fast, rime_main.
source docs/gpu-runs/2026-12-05-d256/lib.sh F5
for b in fast main main fast; do turn std 90 $b bench --suite standard; done
for b in fast main; do turn hd 60 $b bench --suite headdims; done
save; cat $W/times.txt
