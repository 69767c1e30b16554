#!/usr/bin/env bash
# Device call I (2026-12-03): rime_v (fcaa9bb: the cost model's ragged bound) on the thd suite
# (which route each deterministic row now gets, and its time), the hostile offsets, and the
# small THD sweep with guards.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/wi; mkdir -p $W
save() { tar -czf $OUT/callI.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
chmod +x $D/rime_v
step thd $D/rime_v bench --suite thd --out $W/thd
step ragged $D/rime_v selftest --ragged --require-gpu
step selftest_thd_small $D/rime_v selftest --small --guards --filter thd --require-gpu
save
cat $W/times.txt; tail -n 2 $W/selftest_thd_small.txt $W/ragged.txt; cat $W/thd/table.md | cut -c1-160
