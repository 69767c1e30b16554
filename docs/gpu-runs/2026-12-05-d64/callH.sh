#!/usr/bin/env bash
# Device call H, on a fresh machine (carry .device and .frostA1): FROST's first half into /tmp;
# ncu of rime_db's main kernel on the sinks suite's d64 row without mask, sink or determinism
# (b1 h64/8 s4096 d64, atomic): per-kernel times, then --set full of bwd_main (details and the
# SASS page, summarised by ../2026-12-05-d256/ncu_sass_summary.py).
source docs/gpu-runs/2026-12-05-d256/lib.sh H
cp .frostA1/ir.part00 /tmp/ir.part00 && ls -l /tmp/ir.part00 > $W/s0.txt
ROW="s4096x4096 d64 bias=none bf16"; C=/tmp/rime_db
prof() {
  ncu --clock-control none --metrics gpu__time_duration.sum $C bench --suite sinks --filter "$ROW" --warmup 0 --iters 1 --out $W/kt_rime > $W/kt_rime.log 2>&1
  ncu --clock-control none -k regex:bwd_main --set full --import-source no -o $W/ncu_rime -f \
    $C bench --suite sinks --filter "$ROW" --warmup 0 --iters 1 --out $W/pf_rime
  ncu -i $W/ncu_rime.ncu-rep --page details --csv > $W/ncu_rime_details.csv
  ncu -i $W/ncu_rime.ncu-rep --page source --csv --print-source sass > $W/ncu_rime_sass.csv
  python3 docs/gpu-runs/2026-12-05-d256/ncu_sass_summary.py $W/ncu_rime_sass.csv "rime bwd_main d64" > $W/ncu_rime_sass_summary.txt
  rm -f $W/ncu_rime.ncu-rep $W/ncu_rime_sass.csv; }
step prof_rime 200 prof
step one 60 $C bench --suite sinks --filter "$ROW" --out $W/one
save; cat $W/times.txt; grep -h "gpu__time_duration" -B3 $W/kt_rime.log | head -20
