#!/usr/bin/env bash
# Device call F (2026-12-03): rime_k (branch kv-major-grid: the backward main kernel built
# KV_MAJOR under a causal band on atomic and two_kernel, grid (Hk, B, KV tiles), heaviest KV
# tiles first; its bench rows carry kv_major_grid) against rime_m (main f892c31, the grid
# before). Timing: the causal rows of the sinks, standard and d256 suites on rime_k, rime_m,
# rime_k (A/B in one call, the repeat brackets drift). Correctness: the small sweep's causal
# cases with guards, the small determinism table, memcheck and racecheck on small causal cases.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/wf; mkdir -p $W
save() { tar -czf $OUT/callF.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; chmod +x $D/rime_k $D/rime_m
for s in sinks:causal standard:causal d256:causal; do
  n=${s%%:*}; f=${s#*:}
  step ${n}_new1 $D/rime_k bench --suite $n --filter "$f" --out $W/${n}_new1
  step ${n}_base $D/rime_m bench --suite $n --filter "$f" --out $W/${n}_base
  step ${n}_new2 $D/rime_k bench --suite $n --filter "$f" --out $W/${n}_new2
done
step selftest_causal_guards $D/rime_k selftest --small --guards --filter causal --require-gpu
step determinism $D/rime_k selftest --determinism --small --require-gpu
step san_memcheck compute-sanitizer --tool memcheck --print-limit 20 $D/rime_k selftest --small --filter causal-d64 --require-gpu
step san_racecheck compute-sanitizer --tool racecheck --print-limit 20 $D/rime_k selftest --small --filter causal-d64v64 --require-gpu
save
cat $W/times.txt; tail -n 2 $W/selftest_causal_guards.txt $W/determinism.txt $W/san_*.txt; grep -h FAIL $W/selftest*.txt $W/determinism.txt | head
