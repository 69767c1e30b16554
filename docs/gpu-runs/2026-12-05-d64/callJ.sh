#!/usr/bin/env bash
# Device call J, right after I (carry .device, .frostB, .dev3): FROST's part B; ncu of FROST on
# H's one case (its cases.json, left in /tmp/w_H/one): every kernel's time (the peer's float64
# check runs first, then 3 warm-up and 20 timed runs), then --set full of the longest kernel's
# fourth launch (past the check's and two warm-ups), as for rime in H.
source docs/gpu-runs/2026-12-05-d256/lib.sh J
FP="PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages"
step frost_install_b 120 bash .frostB/install_b.sh
cp /tmp/w_H/one/cases.json $W/one_cases.json
kt() { env $FP timeout 190 ncu --clock-control none --metrics gpu__time_duration.sum python3 .dev3/frost_peer_sink.py $W/one_cases.json > $W/kt_frost.log 2>&1; }
step kt_frost 200 kt
# The longest kernel by its first line "  NAME (grid)x(block), Context..." and the duration after it.
python3 - "$W/kt_frost.log" > $W/frost_kernel.txt <<'PY'
import re, sys
name, best = None, {}
for line in open(sys.argv[1]):
    m = re.match(r"^  (\S.*?) \(\d+, \d+, \d+\)x\(\d+, \d+, \d+\), Context", line)
    if m: name = m.group(1); continue
    m = re.search(r"gpu__time_duration.sum\s+(\S+)\s+([\d.,]+)", line)
    if m and name:  # in microseconds
        v = float(m.group(2).replace(",", "")) * {"ns": 1e-3, "us": 1, "ms": 1e3, "s": 1e6}.get(m.group(1), 1)
        best[name] = max(best.get(name, 0), v)
for n, v in sorted(best.items(), key=lambda x: -x[1]): print(f"{v:12.1f} {n}")
PY
K=$(head -1 $W/frost_kernel.txt | awk '{print $2}' | cut -c1-60)
pf() { env $FP timeout 200 ncu --clock-control none -k "regex:^$(printf '%s' "$K" | sed 's/[][\.*^$(){}+?|]/\\&/g')" --launch-skip 3 -c 1 --set full --import-source no -o $W/ncu_frost -f \
    python3 .dev3/frost_peer_sink.py $W/one_cases.json > $W/pf_frost.log 2>&1
  ncu -i $W/ncu_frost.ncu-rep --page details --csv > $W/ncu_frost_details.csv
  ncu -i $W/ncu_frost.ncu-rep --page source --csv --print-source sass > $W/ncu_frost_sass.csv
  python3 docs/gpu-runs/2026-12-05-d256/ncu_sass_summary.py $W/ncu_frost_sass.csv "FROST d64" > $W/ncu_frost_sass_summary.txt
  rm -f $W/ncu_frost.ncu-rep $W/ncu_frost_sass.csv; }
step prof_frost 250 pf
save; cat $W/times.txt; head -5 $W/frost_kernel.txt; tail -3 $W/pf_frost.log; wc -c $W/ncu_frost_details.csv
