#!/usr/bin/env bash
# Device call W1 (2026-12-06; carry .device and .wheel, the Python wheel of the tree with the
# workspace alignment check, crates/python/build_wheel.sh): the Python GPU tests on workspaces
# and misaligned or misplaced buffers; the per-instruction source view of the 192/128
# two_kernel main kernel on rime_main (dfe3ba4), for the next step on those rows.
source docs/gpu-runs/2026-12-05-d256/lib.sh W1
py_tests() { local out=$W/py root=$PWD; source crates/python/gpu_env.sh
  (cd crates/python && "$py" -m pytest tests/test_gpu.py -k "workspace or misaligned or mixed_devices" -v -rs -p no:cacheprovider); }
step py 240 py_tests
step src192 90 ncu --clock-control none -k regex:bwd_main --launch-count 1 --section SourceCounters --section WarpStateStats -o $W/src192 /tmp/rime_main bench --suite standard --filter "d192/128 bias=none bf16" --warmup 0 --iters 1 --out $W/src192b
step src192_csv 60 ncu -i $W/src192.ncu-rep --page source --csv --print-source sass
rm -f $W/src192.ncu-rep
save; cat $W/times.txt; tail -n 12 $W/py.txt
