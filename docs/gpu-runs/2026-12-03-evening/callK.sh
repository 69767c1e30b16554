#!/usr/bin/env bash
# Device call K (2026-12-03 evening): rime_x = 5f6c135 (branch d256-32x64): the relay turn
# parked in shared memory (bwd_main.cu) and the d256 backward entry bwd_d256_32x64_v2 at 32 x 64
# tiles (Q 32, KV 64; warp grids 2, 4, 2; one Q buffer; V staged through Q and dO: 77,056 B)
# instead of 64 x 32 (grids 4, 2, 2: 95,232 B), the shape FROST runs at d256; rime_w = b44cc9e
# (call J's binary, the 64 x 32 entry). A/B in one call: the d256 suite on each binary's own
# choices in the order x, w, x, then rime_w pinned to atomic (rime_x's choice for the
# non-deterministic rows). Correctness on rime_x: the whole
# small sweep with guards, the full-size d256 cases with guards, the 20-repeat determinism
# table, memcheck on the small d256 cases.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/wk; mkdir -p $W; X=$D/rime_x; B=$D/rime_w
save() { tar -czf $OUT/callK.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; chmod +x $X $B
step d256_x1 $X bench --suite d256 --out $W/d256_x1
step d256_w $B bench --suite d256 --out $W/d256_w
step d256_x2 $X bench --suite d256 --out $W/d256_x2
step d256_w_atomic $B bench --suite d256 --route atomic --out $W/d256_w_atomic
step selftest_d256_full $X selftest --guards --filter d256 --require-gpu
step selftest_small_guards $X selftest --small --guards --require-gpu
step determinism $X selftest --determinism --repeats 20 --require-gpu
step san_memcheck compute-sanitizer --tool memcheck --print-limit 20 $X selftest --small --filter d256 --require-gpu
save
cat $W/times.txt; tail -n 2 $W/selftest_*.txt $W/determinism.txt $W/san_*.txt; grep -h FAIL $W/selftest*.txt $W/determinism.txt | head; for f in d256_x1 d256_w d256_x2; do sed -n 5,8p $W/$f/table.md | cut -c1-150; done
