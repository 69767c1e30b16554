#!/usr/bin/env bash
# Device call A1: three binaries built here from fec8776 (`cargo build --release -p rime-cli`,
# stripped, `xz -T2 -c` into .device/x/): rime_main (fec8776), rime_dq4 (fec8776 with
# stages.patch (here; prepared as prepared-dq-gemm-stages): the d128 and 192/128 dQ GEMMs in four 32-column
# stages) and rime_pdl (fec8776 with programmatic dependent launches: launch.rs and pdl_enter in
# common.cuh). Carry .device and .frostA1 (FROST's first half, kept in /tmp for call A2).
# Timings in the order main, dq4, pdl, pdl, dq4, main: the standard suite's no-bias rows and the
# sinks suite on each binary's own route; the thd suite on own routes (main, pdl) and pinned to
# two_kernel (main, dq4); ncu time of the dQ GEMM on the d128 deterministic and 192/128 rows
# (main, dq4).
source docs/gpu-runs/2026-12-05-d256/lib.sh A1
cp .frostA1/ir.part00 /tmp/ir.part00 && ls -l /tmp/ir.part00 > $W/s0.txt
for b in main dq4 pdl pdl dq4 main; do r=$(( $(ls $W | grep -c "^std_${b}_") + 1 ))
  step std_${b}_$r 60 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_${b}_$r
  step sinks_${b}_$r 40 /tmp/rime_$b bench --suite sinks --out $W/sinks_${b}_$r
done
for b in main pdl pdl main; do r=$(( $(ls $W | grep -c "^thd_${b}_") + 1 ))
  step thd_${b}_$r 60 /tmp/rime_$b bench --suite thd --out $W/thd_${b}_$r; done
for b in main dq4 dq4 main; do r=$(( $(ls $W | grep -c "^thd2k_${b}_") + 1 ))
  step thd2k_${b}_$r 60 /tmp/rime_$b bench --suite thd --route two_kernel --out $W/thd2k_${b}_$r; done
for b in main dq4; do for f in "h16/16 s2048x2048 d128 bias=none det bf16" "d192/128 bias=none bf16"; do
  n=$(echo "$f" | tr -c 'a-z0-9' '_' | cut -c1-24)
  step kt_${b}_$n 60 ncu --clock-control none -k regex:dq_gemm --metrics gpu__time_duration.sum /tmp/rime_$b bench --suite standard --filter "$f" --warmup 0 --iters 1 --out $W/kt_${b}_$n
done; done
save; cat $W/times.txt; grep -hE "rime_|dq_gemm|duration" $W/kt_*.txt | grep -v PROF
