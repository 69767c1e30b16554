#!/usr/bin/env bash
# Device call Z1 (carry .frostA1 and .device with rime_main = 0f261b1 and rime_e1; records held
# out). On an H200: the prepared route check of the `h200` profile (../prepared-h200-routes,
# without its thd-pad cases, which ran in V1): the standard suite on the model's choices and
# pinned to atomic and to two_kernel, in the order own, atomic, two_kernel, two_kernel, atomic.
# On any GPU, then: the first half of FROST's part A (Z2 and Z3 follow on the same machine) and
# ncu's full set on one launch of each d192 main kernel of the no-bias d192 row: main's split
# (two_kernel) and fused (atomic) kernels and e1's fused kernel (FROST's layout), for Z3's
# comparison with FROST's main kernel on the same row.
source docs/gpu-runs/2026-12-05-d256/lib.sh Z1
if grep -q H200 $W/gpu.txt; then
  for r in own atomic two_kernel two_kernel atomic; do
    if [ $r = own ]; then turn std 100 main bench --suite standard
    elif [ $r = atomic ]; then turn std_atomic 100 main bench --suite standard --route atomic
    else turn std_2k 100 main bench --suite standard --route two_kernel; fi
  done
fi
step frost_keep 30 frost_keep
D="--suites docs/gpu-runs/2026-12-07-eve/d192_suite.json --suite d192"
F="b4 h16/16 s2048x2048 d192 bias=none bf16"
prof() { local n=$1 b=$2 r=$3
  step ncu_$n 120 ncu --clock-control none -k regex:rime_bwd_main --launch-count 1 --set full \
    -o $W/$n /tmp/rime_$b bench $D --filter "$F" --route $r --warmup 0 --iters 1 --out $W/ncu_$n
  step det_$n 60 ncu -i $W/$n.ncu-rep --page details --print-details all; rm -f $W/$n.ncu-rep; }
prof main_split main two_kernel
prof main_fused main atomic
prof e1_fused e1 atomic
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt
