#!/usr/bin/env bash
# Device call A (2026-12-04): bulk-copied Q / dO tiles (rime_bulk, this tree) against main
# 901af6e (rime_base) in one call: correctness of rime_bulk on the small sweep with guards,
# then the d256 suite's no-bias rows pinned to two_kernel and to atomic and the standard suite
# on each binary's own choices, base and bulk alternating, base repeated at the end.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk
W=/tmp/wa; mkdir -p $W
save() { tar -czf $OUT/callA.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1
B=.device/rime_base; N=.device/rime_bulk
step small_bulk $N selftest --small --guards --require-gpu
for r in two_kernel atomic; do
  for x in base bulk; do
    bin=$B; [ $x = bulk ] && bin=$N
    step d256_${r}_$x $bin bench --suite d256 --route $r --filter bias=none --out $W/d256_${r}_$x
  done
done
step std_base $B bench --suite standard --out $W/std_base
step std_bulk $N bench --suite standard --out $W/std_bulk
step d256_two_kernel_base_r $B bench --suite d256 --route two_kernel --filter bias=none --out $W/d256_two_kernel_base_r
save
cat $W/times.txt; tail -n 3 $W/small_bulk.txt; grep -h "ms" $W/d256_*/*.md 2>/dev/null | head -40
