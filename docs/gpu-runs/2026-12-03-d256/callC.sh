#!/usr/bin/env bash
# Device call C (2026-12-03): correctness of binary rime_new (d256 envelope, vectorised
# dbias_reduce.cu): the small sweep with guard zones (every envelope, route and dtype), the full
# sweep's d256 and padded cases, the determinism table with 20 repeats, compute-sanitizer
# memcheck and racecheck on the small d256 and broadcast-dBias cases.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/wc; mkdir -p $W
save() { tar -czf $OUT/callC.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; chmod +x $D/rime_new
step selftest_small_guards $D/rime_new selftest --small --guards --require-gpu
step selftest_d256 $D/rime_new selftest --filter d256 --guards --require-gpu
step selftest_pad $D/rime_new selftest --filter pad-d2 --guards --require-gpu
step determinism $D/rime_new selftest --determinism --repeats 20 --require-gpu
step san_memcheck compute-sanitizer --tool memcheck --print-limit 20 $D/rime_new selftest --small --filter d256 --require-gpu
step san_racecheck compute-sanitizer --tool racecheck --print-limit 20 $D/rime_new selftest --small --filter d256 --require-gpu
step san_memcheck_bcast compute-sanitizer --tool memcheck --print-limit 20 $D/rime_new selftest --small --filter bcast-dbias/bf16/bhsd/two_kernel --require-gpu
save
cat $W/times.txt; tail -n 2 $W/selftest*.txt $W/determinism.txt $W/san_*.txt; grep -h FAIL $W/selftest*.txt $W/determinism.txt | head
