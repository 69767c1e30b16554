#!/usr/bin/env bash
# Device call V (prepared 2026-12-05 evening, ran 19:20-19:29 UTC that night; carry .device):
# convert.cu 8 elements a step (convert_vec.patch) against the tree it patches. rime_main is main (cargo build --release -p
# rime-cli; strip; xz into .device/x/rime_main.xz), rime_cv the same tree with the patch.
# Correctness first: every small-sweep case on the routes that run the convert kernel (atomic
# and relay: dQ, a broadcast dBias's accumulator; ordered_dbias: its partials, parts > 1; the
# thd cases: a ragged dQ), with guards; the determinism table; memcheck of the thd cases. Then
# per-kernel times (ncu) of one atomic row and the sinks and standard suites, own route
# choices, in the order main, cv, main, cv. About 250 s on a warm kernel cache.
source docs/gpu-runs/2026-12-05-d256/lib.sh V
C=/tmp/rime_cv; M=/tmp/rime_main
for r in atomic relay ordered_dbias thd; do
  step guards_$r 150 $C selftest --small --guards --require-gpu --filter $r
done
step det 60 $C selftest --determinism --small
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step memcheck_thd 120 $CS --tool memcheck $C selftest --small --filter thd-
ROW="s4096x4096 d64 bias=none bf16"
for b in main cv; do
  step kt_$b 60 ncu --clock-control none --metrics gpu__time_duration.sum /tmp/rime_$b bench --suite sinks --filter "$ROW" --warmup 0 --iters 1 --out $W/kt_$b
done
for b in main cv main_r cv_r; do
  bin=/tmp/rime_${b%_r}
  step sinks_$b 30 $bin bench --suite sinks --out $W/sinks_$b
  step std_$b 100 $bin bench --suite standard --out $W/std_$b
done
save; cat $W/times.txt; tail -qn 1 $W/guards_*.txt; tail -n 2 $W/det.txt; grep -h "convert" -A6 $W/kt_*.txt | grep duration
