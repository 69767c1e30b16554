#!/usr/bin/env bash
# Device call A (issue 13): correctness of the new path. Logs under /tmp/w, tarred to $OUT after
# every step so that a cut-short run still returns what it did.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/w; mkdir -p $W
save() { tar -czf $OUT/callA.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; chmod +x $D/rime
step selftest_small_guards $D/rime selftest --small --guards --require-gpu
step selftest_full $D/rime selftest --require-gpu
step edge_resources $D/rime selftest --edge --resources --require-gpu
step determinism $D/rime selftest --determinism --repeats 20 --require-gpu
maskrun() {
  for g in bwd_right_bound_2pow32 bwd_right_bound_i64max bwd_left_bound_2pow32_causal bwd_left_bound_i64max_causal_bottom_right; do
    f=tests/fixtures/valid/$g.json
    $D/rime run $f --target cpu --seed 3 --outputs /tmp/$g.cpu.st || echo "rc=$? cpu $g"
    for r in atomic relay two_kernel; do
      $D/rime run $f --target auto --engine sm120/$r --seed 3 --outputs /tmp/$g.$r.st || echo "rc=$? $r $g"
    done
    python3 $D/compare_st.py /tmp/$g.cpu.st /tmp/$g.atomic.st /tmp/$g.relay.st /tmp/$g.two_kernel.st
  done
  # The same graphs with the old binary: the truncated bounds it ran (the defect being fixed).
  for g in bwd_right_bound_2pow32 bwd_left_bound_2pow32_causal; do
    $D/rime_old run tests/fixtures/valid/$g.json --target auto --engine sm120/atomic --seed 3 --outputs /tmp/$g.old.st || echo "rc=$? old $g"
    python3 $D/compare_st.py /tmp/$g.cpu.st /tmp/$g.old.st
  done
}
step maskrun maskrun
dumps() {
  python3 -m pip install -q --no-deps --no-index --target /tmp/fe .whl/nvidia_cudnn_frontend-1.32.0-*.whl
  mkdir -p /tmp/cudnn-dumps
  PYTHONPATH=/tmp/fe python3 $D/generate_dumps.py /tmp/cudnn-dumps
  tar -czf $OUT/cudnn-dumps.tgz -C /tmp/cudnn-dumps .
}
step dumps dumps
for tool in memcheck racecheck synccheck; do
  step san_$tool compute-sanitizer --tool $tool --print-limit 20 $D/rime selftest --small --filter bf16 --require-gpu
done
save
cat $W/times.txt; tail -n 3 $W/selftest_small_guards.txt $W/selftest_full.txt $W/edge_resources.txt $W/determinism.txt $W/maskrun.txt $W/san_*.txt
