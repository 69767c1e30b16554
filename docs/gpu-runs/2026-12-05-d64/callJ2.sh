#!/usr/bin/env bash
# Device call J2, right after J on the same machine (carry .device, .frostB, .dev3; run inline
# on 2026-12-05, kept here as run): J's --set full had taken the longest kernel, which was the
# peer's own f32 reference GEMM (cuBLAS), not FROST's. This names FROST's backward kernel and
# skips three of its launches (the float64 check's and two warm-ups).
source docs/gpu-runs/2026-12-05-d256/lib.sh J2
FP="PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages"
cp /tmp/w_J/one_cases.json $W/
pf() { env $FP timeout 200 ncu --clock-control none -k "regex:^cudnn_kernel_cutlass_kernel_cudnnfrost" --launch-skip 3 -c 1 --set full --import-source no -o $W/ncu_frost -f python3 .dev3/frost_peer_sink.py $W/one_cases.json > $W/pf_frost.log 2>&1
  ncu -i $W/ncu_frost.ncu-rep --page details --csv > $W/ncu_frost_details.csv
  ncu -i $W/ncu_frost.ncu-rep --page source --csv --print-source sass > $W/ncu_frost_sass.csv
  python3 docs/gpu-runs/2026-12-05-d256/ncu_sass_summary.py $W/ncu_frost_sass.csv "FROST d64" > $W/ncu_frost_sass_summary.txt
  rm -f $W/ncu_frost.ncu-rep $W/ncu_frost_sass.csv; }
step prof_frost 250 pf; save; cat $W/times.txt; tail -4 $W/pf_frost.log; wc -c $W/*.csv $W/*.txt
