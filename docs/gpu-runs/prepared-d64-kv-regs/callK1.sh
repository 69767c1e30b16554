#!/usr/bin/env bash
# Device call K1 (prepared 2026-12-05, not run). Two d64 main-kernel candidates against the
# tree they patch (rime_head), in one call:
#   rime_d64k   K's fragments of product 1 in registers (d64_k_regs.patch);
#   rime_d64kv  K's and V's, with P and dS in V's region (d64_kv_regs.patch).
# Build the three binaries first (README.md here), xz them into .device/x/ and carry .device.
# Correctness of each candidate comes first: the small sweep's d64-envelope cases (d64v64,
# which includes the sink and THD d64 cases, and pad-d40), every route, bf16 and fp16, with
# guards, and the determinism table. Then the d64 rows of the sinks, standard and thd suites,
# each binary on its own route choices, in the order head, k, kv, head. Expect about 450 s on
# an H100 (R3 and R8's step times), most of it NVRTC compiling each binary's kernels.
source docs/gpu-runs/2026-12-05-d256/lib.sh K1
for c in d64k d64kv; do
  step guards_$c 150 /tmp/rime_$c selftest --small --guards --require-gpu --filter d64v64
  step guards_d40_$c 60 /tmp/rime_$c selftest --small --guards --require-gpu --filter pad-d40
  step det_$c 60 /tmp/rime_$c selftest --determinism --small
done
for b in head d64k d64kv head_r; do
  bin=/tmp/rime_${b%_r}
  step sinks_$b 30 $bin bench --suite sinks --filter d64 --out $W/sinks_$b
  step std_$b 60 $bin bench --suite standard --filter d64 --out $W/std_$b
  step thd_$b 30 $bin bench --suite thd --filter d64 --out $W/thd_$b
done
save; cat $W/times.txt; tail -qn 1 $W/guards_*.txt; tail -qn 2 $W/det_*.txt
