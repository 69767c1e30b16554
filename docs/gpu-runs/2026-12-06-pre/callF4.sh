#!/usr/bin/env bash
# Device call F4, right after F3 on the same machine (no carry; the binaries were in /tmp):
# memcheck of rime_pre on the padded-head-dim and thd cases; the d256 suite's no-bias rows in
# the order main, pre, pre, main. (Typed at the prompt as one line; this is that line.)
source docs/gpu-runs/2026-12-05-d256/lib.sh F4; CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer; for f in pad-d thd; do step mem_$f 90 $CS --tool memcheck /tmp/rime_pre selftest --small --require-gpu --filter $f; done; for b in main pre pre main; do r=$(( $(ls $W | grep -c "^d256_${b}_") / 2 + 1 )); step d256_${b}_$r 60 /tmp/rime_$b bench --suite d256 --filter "bias=none" --out $W/d256_${b}_$r; done; save; cat $W/times.txt; tail -n 2 $W/mem_*.txt
