#!/usr/bin/env bash
# Device call T7 (carry .device with rime_main and rime_cand as in T4; records held out): T4's
# machine was gone before T5 (FROST's second call found no first half) and the device time left
# no longer held FROST's three calls, so this times the committed candidate against main on
# their own route choices instead: headdims, standard and d256 suites in the order cand, main,
# main, cand.
source docs/gpu-runs/2026-12-05-d256/lib.sh T7
for s in headdims:hd standard:std d256:d256; do
  for b in cand main main cand; do turn ${s##*:} 60 $b bench --suite ${s%%:*}; done
done
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt
