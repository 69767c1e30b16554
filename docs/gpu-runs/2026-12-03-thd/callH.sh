#!/usr/bin/env bash
# Device call H (2026-12-03): rime_u (the ragged checks' downloads under one stream synchronize
# instead of one per tensor; the preprocess kernel no longer zeroes dQ-accumulator rows a
# ragged dQ does not have) against rime_t (call G's binary) on the thd suite, in the order
# u, t, u; then the THD sweep cases with guards and the hostile offsets on rime_u.
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
save
cat $W/times.txt; tail -n 2 $W/selftest_thd_small.txt $W/ragged.txt
