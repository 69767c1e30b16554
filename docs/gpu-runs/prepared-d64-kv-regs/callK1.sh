#!/usr/bin/env bash
# Device call K1 (prepared 2026-12-05, not run): the d64 main kernel with K's and V's fragments
# in registers (d64_kv_regs.patch, binary rime_d64kv) against the same tree without it
# (rime_head), in one call. Build both first (README.md here), xz them into .device/x/, carry
# .device. Correctness of the candidate first (the small sweep's d64-envelope cases, which
# include pad-d40 and the sink and THD d64 cases, every route, with guards; the determinism
# table), then the d64 rows of the sinks and standard suites and the thd suite on each binary's
# own route choices, A, B, A. About 450 s on an H100.
source docs/gpu-runs/2026-12-05-d256/lib.sh K1
H=/tmp/rime_head; K=/tmp/rime_d64kv
step guards_d64 200 $K selftest --small --guards --require-gpu --filter d64v64
step guards_d40 60 $K selftest --small --guards --require-gpu --filter pad-d40
step det 60 $K selftest --determinism --small
for b in head d64kv head_r; do
  bin=/tmp/rime_${b%_r}
  step sinks_$b 40 $bin bench --suite sinks --filter d64 --out $W/sinks_$b
  step std_$b 60 $bin bench --suite standard --filter d64 --out $W/std_$b
  step thd_$b 40 $bin bench --suite thd --filter d64 --out $W/thd_$b
done
save; cat $W/times.txt; tail -n 2 $W/guards_*.txt $W/det.txt
