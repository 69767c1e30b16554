#!/usr/bin/env bash
# Device call M (2026-12-02, fourth session): binary rime_ds (two_kernel sums a broadcast bias's
# dBias from its dS workspace, dbias_reduce.cu). Correctness of two_kernel on every sweep case
# (guards), the determinism table, sanitizers on the broadcast-dBias cases, the suite's broadcast
# rows on the analyzer's choice and pinned to two_kernel, and the kernel durations of one row.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/wm; mkdir -p $W
save() { tar -czf $OUT/callM.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; chmod +x $D/rime_ds
step selftest_two_kernel $D/rime_ds selftest --filter two_kernel --guards --require-gpu
step determinism $D/rime_ds selftest --determinism --repeats 20 --require-gpu
step bench_chosen $D/rime_ds bench --suite standard --filter broadcast --out $W/chosen
step bench_two_kernel $D/rime_ds bench --suite standard --filter broadcast --route two_kernel --out $W/two_kernel
step san_memcheck compute-sanitizer --tool memcheck --print-limit 20 $D/rime_ds selftest --small --filter bcast --require-gpu
step san_racecheck compute-sanitizer --tool racecheck --print-limit 20 $D/rime_ds selftest --small --filter bcast --require-gpu
step prof_two_kernel_det ncu --clock-control none --metrics gpu__time_duration.sum --csv $D/rime_ds bench --suite standard --filter "b4 h16/16 s2048x2048 d128 bias=broadcast det bf16" --warmup 0 --iters 1 --out $W/prof
save
cat $W/times.txt; tail -n 2 $W/selftest_two_kernel.txt $W/determinism.txt $W/san_*.txt; grep -h FAIL $W/selftest*.txt $W/determinism.txt | head
