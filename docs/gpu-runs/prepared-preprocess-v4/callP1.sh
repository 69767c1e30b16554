#!/usr/bin/env bash
# Prepared device call P1 (not run): rime_pre (main with preprocess.patch: the preprocess kernel
# with 16-byte loads of dO and O and 16-byte zeroing stores) against rime_main. Build both here
# (`git apply` the patch in a worktree; `cargo build --release -p rime-cli`, strip, `xz -T2 -c`
# into .device/x/rime_main.xz and .device/x/rime_pre.xz); carry .device. About 500 s on a fresh
# machine. Timings in the order main, pre, pre, main (standard suite's no-bias rows, sinks, thd
# on own routes; the standard suite's per-batch rows once each); ncu time of the preprocess
# kernel on three rows on both; rime_pre's correctness: the guarded small sweep (every route),
# determinism, memcheck of the odd-length, padded-head-dim and thd cases.
source docs/gpu-runs/2026-12-05-d256/lib.sh P1
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
for b in main pre pre main; do r=$(( $(ls $W | grep -c "^std_${b}_") / 2 + 1 ))
  step std_${b}_$r 60 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_${b}_$r
  step sinks_${b}_$r 40 /tmp/rime_$b bench --suite sinks --out $W/sinks_${b}_$r
  step thd_${b}_$r 60 /tmp/rime_$b bench --suite thd --out $W/thd_${b}_$r
done
for b in pre main; do step batch_$b 60 /tmp/rime_$b bench --suite standard --filter "bias=batch" --out $W/batch_$b; done
for b in main pre; do for f in "b8 h16/16 s1024x1024 d64 bias=none bf16" "b4 h16/16 s2048x2048 d128 bias=none bf16" "b4 h16/16 s2048x2048 d256 bias=none bf16"; do
  n=$(echo "$f" | tr -c 'a-z0-9' '_' | cut -c1-28); s=standard; case $f in *d256*) s=d256;; esac
  step kt_${b}_$n 60 ncu --clock-control none -k regex:"preprocess|convert" --metrics gpu__time_duration.sum,dram__bytes.sum /tmp/rime_$b bench --suite $s --filter "$f" --warmup 0 --iters 1 --out $W/kt_${b}_$n
done; done
step guards 430 /tmp/rime_pre selftest --small --guards --require-gpu
step det 80 /tmp/rime_pre selftest --determinism --small --require-gpu
for f in s200 pad-d thd; do step mem_$f 90 $CS --tool memcheck /tmp/rime_pre selftest --small --require-gpu --filter $f; done
save; cat $W/times.txt; tail -n 1 $W/guards.txt $W/det.txt; tail -n 2 $W/mem_*.txt
grep -hE "rime_|duration|dram" $W/kt_*.txt | grep -v PROF
