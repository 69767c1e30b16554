#!/usr/bin/env bash
# Device call P2: the d256 two_kernel main kernel split by product (SPLIT_SDP: S on four warps
# with K in registers, dP on four with V) against main, in one call. Binaries: rime_head (main,
# 0c5850b), rime_split (the split entry, dK / dV grid 2), rime_split4 (the same, grid 4),
# rime_v222 (main's layout with dK / dV grid 2). Correctness of the split kernel first (sweep
# with guard zones, determinism), then the d256 suite on each (own route choices: two_kernel),
# per-kernel times (ncu gpu__time_duration) and ncu --set full of the main kernels on
# b4 h16 s2048 d256 without a bias, main again at the end.
source docs/gpu-runs/2026-12-05-d256/lib.sh P2
H=/tmp/rime_head; S=/tmp/rime_split
ROW="b4 h16/16 s2048x2048 d256 bias=none det bf16"
step guards_split 200 $S selftest --small --guards --require-gpu --filter d256
step det_split 100 $S selftest --determinism --small --filter d256
for b in head split split4 v222; do step d256_$b 120 /tmp/rime_$b bench --suite d256 --out $W/d256_$b; done
prof() { local bin=$1 tag=$2
  ncu --clock-control none --metrics gpu__time_duration.sum $bin bench --suite d256 --filter "$ROW" --warmup 0 --iters 1 --out $W/kt_$tag > $W/kt_$tag.log 2>&1
  ncu --clock-control none -k regex:bwd_main --set full --import-source no -o $W/ncu_$tag -f \
    $bin bench --suite d256 --filter "$ROW" --warmup 0 --iters 1 --out $W/pf_$tag
  ncu -i $W/ncu_$tag.ncu-rep --page details --csv > $W/ncu_${tag}_details.csv
  ncu -i $W/ncu_$tag.ncu-rep --page source --csv --print-source sass > $W/ncu_${tag}_sass.csv
  rm -f $W/ncu_$tag.ncu-rep; }
step prof_split 200 prof $S split
step prof_head 200 prof $H head
step d256_head_r 120 $H bench --suite d256 --out $W/d256_head_r
save; cat $W/times.txt; tail -3 $W/guards_split.txt $W/det_split.txt; grep -h "gpu__time_duration" -B3 $W/kt_*.log | grep -v "^--" | head -30
