#!/usr/bin/env bash
# Device call C (2026-12-01, main 012e097): the Python package on the GPU (issue 17), the selftest
# re-run after the harness fix and the inference cases (issue 13), the cuDNN dumps' native twins
# on sm120 against the CPU engine (issue 18), and the regenerated dumps. Tarred after every step.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/w; mkdir -p $W
save() { tar -czf $OUT/callC.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; chmod +x $D/rime
step selftest_small_guards $D/rime selftest --small --guards --require-gpu
step selftest_full $D/rime selftest --require-gpu
twins() {
  for f in tests/fixtures/cudnn/native/*.json; do
    g=$(basename $f .json)
    $D/rime run $f --target cpu --seed 5 --outputs /tmp/$g.cpu.st > /tmp/$g.cpu.txt 2>&1 || { echo "$g cpu rc=$?: $(tail -n 2 /tmp/$g.cpu.txt | tr '\n' ' ')"; continue; }
    $D/rime run $f --target auto --seed 5 --outputs /tmp/$g.gpu.st > /tmp/$g.gpu.txt 2>&1 || { echo "$g gpu rc=$?: $(tail -n 3 /tmp/$g.gpu.txt | tr '\n' ' ')"; continue; }
    echo "$g: $(grep '^node:' /tmp/$g.gpu.txt | sed 's/ workspace.*//' | tr '\n' ';') $(python3 $D/compare_st.py /tmp/$g.cpu.st /tmp/$g.gpu.st | tail -n 1)"
  done
}
step twins twins
step python bash crates/python/gpu_check.sh $W/python
dumps() {
  python3 -m pip install -q --no-deps --no-index --target /tmp/fe .whl/nvidia_cudnn_frontend-1.32.0-*.whl
  mkdir -p /tmp/cudnn-dumps
  PYTHONPATH=/tmp/fe python3 $D/generate_dumps.py /tmp/cudnn-dumps
  tar -czf $OUT/cudnn-dumps.tgz -C /tmp/cudnn-dumps .
}
step dumps dumps
step san_memcheck compute-sanitizer --tool memcheck --print-limit 20 $D/rime selftest --small --filter bf16 --require-gpu
save
cat $W/times.txt; tail -n 3 $W/selftest_small_guards.txt $W/selftest_full.txt $W/san_*.txt; cat $W/twins.txt; cat $W/python/summary.txt | tail -40
