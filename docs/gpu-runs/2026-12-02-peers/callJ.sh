#!/usr/bin/env bash
# Device call J (2026-12-02, fourth session): binary rime_ord2 (call I's plus `bench --route
# ordered_dbias` and the determinism table's corrected route check). The full sweep's
# ordered_dbias cases with guards (the small sweep in call I has no (1, 1) or MQA bias), the small
# determinism table, the suite's broadcast rows on ordered_dbias and on the analyzer's choice in
# one call, and the kernel durations (ncu) of one broadcast row per route.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/wj; mkdir -p $W
save() { tar -czf $OUT/callJ.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; chmod +x $D/rime_ord2
step selftest_full_ordered $D/rime_ord2 selftest --filter ordered_dbias --guards --require-gpu
step determinism_small $D/rime_ord2 selftest --determinism --small --repeats 20 --require-gpu
step bench_chosen $D/rime_ord2 bench --suite standard --filter broadcast --out $W/chosen
step bench_ordered $D/rime_ord2 bench --suite standard --filter broadcast --route ordered_dbias --out $W/ordered
prof() { local tag=$1 filt=$2; shift 2; ncu --clock-control none --metrics gpu__time_duration.sum --csv $D/rime_ord2 bench --suite standard --filter "$filt" --warmup 0 --iters 1 "$@" --out $W/prof_$tag; }
step prof_atomic prof atomic "b4 h16/16 s2048x2048 d128 bias=broadcast bf16"
step prof_ordered prof ordered "b4 h16/16 s2048x2048 d128 bias=broadcast bf16" --route ordered_dbias
step prof_ordered_det prof ordered_det "b4 h16/16 s2048x2048 d128 bias=broadcast det bf16"
step prof_batch_det prof batch_det "b4 h16/16 s2048x2048 d128 bias=batch det bf16"
save
cat $W/times.txt; tail -n 2 $W/selftest_full_ordered.txt $W/determinism_small.txt; grep -h FAIL $W/selftest*.txt $W/determinism*.txt | head
