#!/usr/bin/env bash
# Device call M (2026-12-03 night): rime_z = main at 11c8f76 (the 32 x 64 d256 tile merged, the
# recalibrated cost model) on its own choices on the standard, sinks, thd and d256 suites, to
# check on the GPU that every row runs the route the model picks and that its time matches the
# pinned runs of calls L1 / L3; then the small sweep with guards on the d256 cases.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.dev3; W=/tmp/wm; mkdir -p $W
save() { tar -czf $OUT/callM.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; xz -dc $D/rime_z.xz > /tmp/rime_z; chmod +x /tmp/rime_z; Z=/tmp/rime_z
for s in standard sinks thd d256; do step $s $Z bench --suite $s --out $W/$s; done
step selftest_small_d256 $Z selftest --small --guards --filter d256 --require-gpu
step selftest_small_bcast $Z selftest --small --guards --filter broadcast --require-gpu
save
cat $W/times.txt; tail -n 2 $W/selftest_*.txt
