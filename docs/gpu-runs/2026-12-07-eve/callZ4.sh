#!/usr/bin/env bash
# Device call Z4 (carry .frostA1 and .device with rime_main and rime_e1; records held out): Z1's
# profiles again with the per-opcode counts kept (Z1 printed them without their opcode names):
# for main's split and fused d192 kernels and e1's fused one on the no-bias d192 row, ncu's
# details with metric instances and the SASS source page with executed instructions per
# instruction (CSV); the first half of FROST's part A (Z5, Z6 follow on the same machine).
source docs/gpu-runs/2026-12-05-d256/lib.sh Z4
step frost_keep 30 frost_keep
D="--suites docs/gpu-runs/2026-12-07-eve/d192_suite.json --suite d192"
F="b4 h16/16 s2048x2048 d192 bias=none bf16"
prof() { local n=$1 b=$2 r=$3
  step ncu_$n 120 ncu --clock-control none -k regex:rime_bwd_main --launch-count 1 --set full \
    -o $W/$n /tmp/rime_$b bench $D --filter "$F" --route $r --warmup 0 --iters 1 --out $W/ncu_$n
  step inst_$n 60 ncu -i $W/$n.ncu-rep --page details --section InstructionStats --print-metric-instances details
  step src_$n 60 ncu -i $W/$n.ncu-rep --page source --csv --print-source sass; rm -f $W/$n.ncu-rep; }
prof main_split main two_kernel
prof main_fused main atomic
prof e1_fused e1 atomic
save; cat $W/times.txt; wc -c $W/src_*.txt
