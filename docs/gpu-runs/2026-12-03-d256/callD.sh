#!/usr/bin/env bash
# Device call D (2026-12-03): binary rime_d (main after the sinks merge, the dq_gemm.cu column
# fix and the cost model's dQ-reduction term) and the Python wheel built from the same tree.
# Correctness: the small sweep with guard zones (every envelope incl. d256, every route, sinks),
# the full-size sink and d256 cases, the determinism table (20 repeats, with the sink rows), the
# edge table, compute-sanitizer on small sink cases. Timing: the d256 suite and the standard
# suite on the analyzer's choices (the cost model changed). Then crates/python/gpu_check.sh.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/wd; mkdir -p $W
save() { tar -czf $OUT/callD.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; chmod +x $D/rime_d
step selftest_small_guards $D/rime_d selftest --small --guards --require-gpu
step selftest_sink $D/rime_d selftest --filter sink --guards --require-gpu
step selftest_d256 $D/rime_d selftest --filter d256 --guards --require-gpu
step determinism $D/rime_d selftest --determinism --repeats 20 --require-gpu
step edge $D/rime_d selftest --edge --require-gpu
step san_memcheck compute-sanitizer --tool memcheck --print-limit 20 $D/rime_d selftest --small --filter sink --require-gpu
step san_racecheck compute-sanitizer --tool racecheck --print-limit 20 $D/rime_d selftest --small --filter sink-d64v64 --require-gpu
step bench_d256 $D/rime_d bench --suite d256 --out $W/d256
step bench_standard $D/rime_d bench --suite standard --out $W/standard
# The rows whose choice the cost model's new dQ-reduction term moved to two_kernel, pinned to
# atomic (the old choice) in the same call.
step atomic_d256 $D/rime_d bench --suite d256 --route atomic --out $W/atomic_d256
step atomic_d192 $D/rime_d bench --suite standard --filter "d192/128 bias=batch" --route atomic --out $W/atomic_d192
step atomic_d64 $D/rime_d bench --suite standard --filter "s1024x1024 d64 bias=batch causal bf16" --route atomic --out $W/atomic_d64
pyc() { mkdir -p $W/py && bash crates/python/gpu_check.sh $W/py; }
step python pyc
save
cat $W/times.txt; tail -n 2 $W/selftest*.txt $W/determinism.txt $W/edge.txt $W/san_*.txt; grep -h FAIL $W/selftest*.txt $W/determinism.txt $W/edge.txt | head; tail -n 3 $W/py/summary.txt 2>/dev/null
