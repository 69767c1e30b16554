#!/usr/bin/env bash
# Device call F1 (2026-12-04, late): the committed tree's binary (rime_final) on the whole small
# sweep with guards (every route; load_tile changed every kernel's tile copies), and the first
# half of FROST's compiler library parked in /tmp for F2 (F1-F3 run back to back on one
# machine: FROST's wheels do not fit one transfer beside the working tree).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk
W=/tmp/wf1; mkdir -p $W
save() { tar -czf $OUT/callF1.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; timeout 300 "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1
for b in base final; do xz -dc .device/x/rime_$b.xz > /tmp/rime_$b; chmod +x /tmp/rime_$b; done
sha256sum /tmp/rime_base /tmp/rime_final > $W/sha256.txt
cp .frostA1/ir.part00 /tmp/ir.part00
step small /tmp/rime_final selftest --small --guards --require-gpu
save
cat $W/times.txt; tail -n 1 $W/small.txt; grep -c FAIL $W/small.txt
