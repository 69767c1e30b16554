#!/usr/bin/env bash
# Device call B (2026-12-04): the pipelined dQ GEMM. rime_dq1 (this tree's table: d64 128x64 x3
# stages, d128 and d192 128x64 x2, d256 128x32 x3) and rime_dq2 (d64 x2, d128 and d192 128x32
# x4, d256 128x32 x2) against main 901af6e (rime_base) in one call: rime_dq1 on the two_kernel
# cases of the small sweep and of the full sweep, with guards, and the small determinism
# table; then the d256 suite and the standard suite's deterministic rows pinned to two_kernel
# on all three binaries, base repeated at the end.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk
W=/tmp/wb; mkdir -p $W
save() { tar -czf $OUT/callB.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; timeout 150 "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1
B=.device/rime_base; N1=.device/rime_dq1; N2=.device/rime_dq2
step small_tk $N1 selftest --small --guards --filter two_kernel --require-gpu
step full_tk $N1 selftest --guards --filter two_kernel --require-gpu
step det_small $N1 selftest --determinism --small --repeats 5 --require-gpu
for x in base dq1 dq2; do
  bin=$B; [ $x = dq1 ] && bin=$N1; [ $x = dq2 ] && bin=$N2
  step d256_$x $bin bench --suite d256 --route two_kernel --out $W/d256_$x
  step stddet_$x $bin bench --suite standard --route two_kernel --filter det --out $W/stddet_$x
done
step d256_base_r $B bench --suite d256 --route two_kernel --out $W/d256_base_r
save
cat $W/times.txt; tail -n 2 $W/small_tk.txt $W/full_tk.txt $W/det_small.txt
