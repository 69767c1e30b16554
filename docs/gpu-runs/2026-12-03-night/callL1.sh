#!/usr/bin/env bash
# Device call L1 (2026-12-03 night): the first half of FROST's compiler library (ir.so.xz, 50 MB,
# split in two: with the 21.5 MB working tree one call carries at most ~45 MB), kept in /tmp for
# L2; then calibration data for the
# cost model: rime_y (905a96c, branch d256-32x64 rebased on main df48f7d) pinned to each route on
# the standard, sinks and thd suites, so that every non-deterministic row has an atomic and a
# two_kernel time from one call (deterministic rows refuse atomic, and run the same kernels as
# their non-deterministic twins).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.dev1; W=/tmp/wl1; mkdir -p $W; Y=$D/rime_y
save() { tar -czf $OUT/callL1.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; xz -dc $D/rime_y.xz > /tmp/rime_y; chmod +x /tmp/rime_y; Y=/tmp/rime_y
step frost_ir cp .frostA1/ir.part00 /tmp/ir.part00
for r in atomic two_kernel; do
  step standard_$r $Y bench --suite standard --route $r --out $W/standard_$r
  step sinks_$r $Y bench --suite sinks --route $r --out $W/sinks_$r
  step thd_$r $Y bench --suite thd --route $r --out $W/thd_$r
done
step standard_relay $Y bench --suite standard --route relay --out $W/standard_relay
step thd_relay $Y bench --suite thd --route relay --out $W/thd_relay
save
cat $W/times.txt; ls /tmp/frost-site | head -3
