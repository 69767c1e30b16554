#!/usr/bin/env bash
# Device call F2 (2026-12-04, late), right after F1 on the same machine: FROST's part A (the
# second half of its compiler library and the rest), then rime_final's sanitizers on the d256
# two_kernel kernel (two Q buffers, V staged through them) and on the plain bf16 cases, the small
# determinism table's d256 rows, and the d256 and standard suites on each binary's own route
# choices, base (e81289f) and final, base repeated at the end.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
W=/tmp/wf2; mkdir -p $W
save() { tar -czf $OUT/callF2.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; timeout 200 "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1
B=/tmp/rime_base; F=/tmp/rime_final
for b in base final; do test -x /tmp/rime_$b || { xz -dc .device/x/rime_$b.xz > /tmp/rime_$b; chmod +x /tmp/rime_$b; }; done
fa() { test -f /tmp/ir.part00 || { echo "F1's half is not on this machine"; return 3; }
  mkdir -p /tmp/fa && cp .frostA2/* /tmp/fa/ && cat /tmp/ir.part00 /tmp/fa/ir.part01 > /tmp/fa/ir.so.xz \
  && echo "$(cat .frostA2/ir.sha256)  /tmp/fa/ir.so.xz" | sha256sum -c && bash /tmp/fa/install_a.sh; }
step frost_install_a fa
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step memcheck $CS --tool memcheck $F selftest --small --filter plain/bf16/bhsd --require-gpu
step racecheck $CS --tool racecheck --racecheck-report all $F selftest --small --filter d256v256 --require-gpu
step det $F selftest --determinism --small --require-gpu
step d256_base $B bench --suite d256 --out $W/d256_base
step d256_final $F bench --suite d256 --out $W/d256_final
step std_base $B bench --suite standard --out $W/std_base
step std_final $F bench --suite standard --out $W/std_final
step d256_base_r $B bench --suite d256 --out $W/d256_base_r
save
cat $W/times.txt; tail -n 2 $W/memcheck.txt $W/racecheck.txt $W/det.txt
