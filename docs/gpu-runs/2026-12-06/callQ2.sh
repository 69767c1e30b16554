#!/usr/bin/env bash
# Device call Q2, right after Q1 on the same machine (carry .device and .frostA2): FROST's part A
# (Q1's half of the compiler library and .frostA2's), then the standard, sinks and thd suites on
# rime_base (main) and rime_cand, own route choices: base, then cand.
source docs/gpu-runs/2026-12-05-d256/lib.sh Q2
fa() { test -f /tmp/ir.part00 || { echo "Q1's half is not on this machine"; return 3; }
  mkdir -p /tmp/fa && cp .frostA2/* /tmp/fa/ && cat /tmp/ir.part00 .frostA2/ir.part01 > /tmp/fa/ir.so.xz \
  && echo "$(cat .frostA2/ir.sha256)  /tmp/fa/ir.so.xz" | sha256sum -c && bash /tmp/fa/install_a.sh; }
step frost_install_a 120 fa
for b in base cand; do
  step std_$b 150 /tmp/rime_$b bench --suite standard --out $W/std_$b
  step sinks_$b 60 /tmp/rime_$b bench --suite sinks --out $W/sinks_$b
  step thd_$b 60 /tmp/rime_$b bench --suite thd --out $W/thd_$b
done
save; cat $W/times.txt; tail -n 2 $W/frost_install_a.txt
