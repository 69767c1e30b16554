#!/usr/bin/env bash
# Device call T1 (carry .device with rime_tma = this folder's tree: the split kernels' Q and dO
# tiles by tensor copies, and rime_main = 834bdfe, main before it; records held out:
# hold.sh out 2026-12-07-tma). In order of priority: every two_kernel case of the guarded small
# sweep on rime_tma (the no-bias split cases run the tensor copies; the rest are controls), then
# the no-bias rows of the headdims, d256 and 192/128 standard rows, timed in turn on both
# binaries.
source docs/gpu-runs/2026-12-05-d256/lib.sh T1
step sweep_2k 200 /tmp/rime_tma selftest --small --guards --require-gpu --filter two_kernel
for b in main tma tma main; do turn hd 60 $b bench --suite headdims --filter bias=none; done
for b in tma main main tma; do turn d256 60 $b bench --suite d256 --filter bias=none; done
for b in main tma; do turn std192 40 $b bench --suite standard --filter "d192/128 bias=none"; done
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt
tail -n 3 $W/sweep_2k.txt; grep -c "tensor copies" $W/sweep_2k.txt; grep FAIL $W/sweep_2k.txt | head
