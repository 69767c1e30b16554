#!/usr/bin/env bash
# Device call H (2026-12-03): rime_u (the ragged checks' downloads under one stream synchronize
# instead of one per tensor; the preprocess kernel no longer zeroes dQ-accumulator rows a
# ragged dQ does not have; RTE003 retired, so two_kernel takes BSHD and THD K and dQ) against
# rime_t (call G's binary) on the thd suite, in the order u, t, u; then on rime_u the THD sweep
# cases with guards (now with two_kernel), the hostile offsets, the whole small sweep with
# guards (BSHD two_kernel cases now run) and memcheck on small THD two_kernel cases.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/wh; mkdir -p $W
save() { tar -czf $OUT/callH.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
chmod +x $D/rime_u $D/rime_t
step thd_u1 $D/rime_u bench --suite thd --out $W/thd_u1
step thd_t $D/rime_t bench --suite thd --out $W/thd_t
step thd_u2 $D/rime_u bench --suite thd --out $W/thd_u2
step selftest_thd_small $D/rime_u selftest --small --guards --filter thd --require-gpu
step ragged $D/rime_u selftest --ragged --require-gpu
step selftest_small_guards $D/rime_u selftest --small --guards --require-gpu
step san_memcheck compute-sanitizer --tool memcheck --print-limit 20 $D/rime_u selftest --small --filter thd-d128v128-padding-causal/bf16/thd/two_kernel --require-gpu
step determinism $D/rime_u selftest --determinism --small --require-gpu
save
cat $W/times.txt; tail -n 2 $W/selftest_*.txt $W/ragged.txt $W/san_memcheck.txt $W/determinism.txt; grep -h FAIL $W/selftest*.txt | head
