#!/usr/bin/env bash
# Device call F (2026-12-03): binary rime_f (the backward main kernel built KV_MAJOR under a
# causal band on atomic and two_kernel: grid (Hk, B, KV tiles), heaviest KV tiles first) against
# rime_e (0a7dadf, the grid before). Timing: the non-deterministic causal rows of the standard
# and d256 suites and the causal rows of the sinks suite on rime_f, rime_e, rime_f (A/B in one
# call). Correctness: the small sweep's causal cases with guards, the small determinism table.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/wf; mkdir -p $W
save() { tar -czf $OUT/callF.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; chmod +x $D/rime_f $D/rime_e
for s in sinks:causal standard:"causal bf16" d256:"causal bf16"; do
  n=${s%%:*}; f=${s#*:}
  step ${n}_new1 $D/rime_f bench --suite $n --filter "$f" --out $W/${n}_new1
  step ${n}_base $D/rime_e bench --suite $n --filter "$f" --out $W/${n}_base
  step ${n}_new2 $D/rime_f bench --suite $n --filter "$f" --out $W/${n}_new2
done
step selftest_causal_guards $D/rime_f selftest --small --guards --filter causal --require-gpu
step determinism $D/rime_f selftest --determinism --small --require-gpu
save
cat $W/times.txt; tail -n 2 $W/selftest_small_guards.txt $W/determinism.txt; grep -h FAIL $W/selftest*.txt $W/determinism.txt | head
