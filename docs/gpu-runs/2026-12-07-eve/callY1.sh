#!/usr/bin/env bash
# Device call Y1 (carry .frostA1 and .device with rime_main = 0f261b1, rime_e1 and rime_e2, the
# two candidates for the (192, 192) envelope's fused-dQ entry; records held out: hold.sh out
# 2026-12-07-eve). The first half of FROST's part A (.frostA1 and .frostA2 with the tree and
# three binaries pass the 64 MiB carry; Y2 and Y3 follow on the same machine). Then the d160 /
# d192 rows (d192_suite.json) on each binary pinned to atomic and to relay, in the order main,
# e1, e2, e2, e1, main; the per-kernel times (ncu, one iteration) of the no-bias d192 row on
# main's two_kernel and on each binary's atomic; the candidates' d192 sweep cases with guards.
source docs/gpu-runs/2026-12-05-d256/lib.sh Y1
step frost_keep 30 frost_keep
D="--suites docs/gpu-runs/2026-12-07-eve/d192_suite.json --suite d192"
for b in main e1 e2 e2 e1 main; do
  turn d_atomic 40 $b bench $D --route atomic
  turn d_relay 40 $b bench $D --route relay
done
F="b4 h16/16 s2048x2048 d192 bias=none bf16"
NCU="ncu --clock-control none --metrics gpu__time_duration.sum"
step ncu_main_2k 60 $NCU /tmp/rime_main bench $D --filter "$F" --route two_kernel --warmup 0 --iters 1 --out $W/ncu_main_2k
for b in main e1 e2; do
  step ncu_${b}_atomic 60 $NCU /tmp/rime_$b bench $D --filter "$F" --route atomic --warmup 0 --iters 1 --out $W/ncu_${b}_atomic
done
for b in e1 e2; do step sweep_$b 120 /tmp/rime_$b selftest --small --guards --require-gpu --filter d192v192; done
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt
grep -h "d192 bias=none bf16\|d192 bias=none causal bf16" $W/d_atomic_*.txt
for f in $W/ncu_*.txt; do echo "== $f"; grep -E "rime_|gpu__time" $f | head -20; done
for f in $W/sweep_*.txt; do echo "== $f"; tail -n 2 $f; done
