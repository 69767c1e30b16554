#!/usr/bin/env bash
# Device call E (2026-12-04, late): d256 main-kernel variants against main e81289f in one call.
# rime_base = e81289f; rime_ld = load_tile steps a per-thread source pointer (no 64-bit multiply
# per chunk); rime_2q = the d256 backward entry with two Q buffers (fits without spills only on
# two_kernel, so only two_kernel rows are timed on it); rime_2qld = both. Quick correctness on
# the d256 cases first, then the d256 suite pinned to two_kernel on all four (base repeated at
# the end), atomic on base / ld, and the standard suite's two_kernel rows on base / ld.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk
W=/tmp/we; mkdir -p $W
save() { tar -czf $OUT/callE.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; timeout 200 "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1
X=.device/x; sha256sum $X/* > $W/sha256.txt
step check_2qld $X/rime_2qld selftest --small --guards --filter d256 --require-gpu
step check_ld $X/rime_ld selftest --small --guards --filter bf16/bhsd --require-gpu
for v in base ld 2q 2qld; do
  step d256tk_$v $X/rime_$v bench --suite d256 --route two_kernel --out $W/d256tk_$v
done
step d256tk_base_r $X/rime_base bench --suite d256 --route two_kernel --out $W/d256tk_base_r
for v in base ld; do
  step d256at_$v $X/rime_$v bench --suite d256 --route atomic --out $W/d256at_$v
  step stdtk_$v $X/rime_$v bench --suite standard --route two_kernel --out $W/stdtk_$v
done
save
cat $W/times.txt; tail -n 2 $W/check_2qld.txt $W/check_ld.txt
