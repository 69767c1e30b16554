#!/usr/bin/env bash
# Device call F2, right after F1 on the same machine (carry .device and .frostA2): FROST's part
# A (F1's half of the compiler library and .frostA2's), then F1's suites again in the order
# bulk, main (so the A/B runs main, bulk, bulk, main over F1 and F2), and the standard suite's
# biased d64 rows on both.
source docs/gpu-runs/2026-12-05-d256/lib.sh F2
fa() { test -f /tmp/ir.part00 || { echo "F1's half is not on this machine"; return 3; }
  mkdir -p /tmp/fa && cp .frostA2/* /tmp/fa/ && cat /tmp/ir.part00 .frostA2/ir.part01 > /tmp/fa/ir.so.xz \
  && echo "$(cat .frostA2/ir.sha256)  /tmp/fa/ir.so.xz" | sha256sum -c && bash /tmp/fa/install_a.sh; }
step frost_install_a 120 fa
for b in bulk main; do
  step std_${b}_r 60 /tmp/rime_$b bench --suite standard --filter "bias=none" --out $W/std_${b}_r
  step sinks_${b}_r 30 /tmp/rime_$b bench --suite sinks --out $W/sinks_${b}_r
  step thd_${b}_r 40 /tmp/rime_$b bench --suite thd --out $W/thd_${b}_r
done
for b in main bulk; do
  step d64b_$b 60 /tmp/rime_$b bench --suite standard --filter " d64 bias=b" --out $W/d64b_$b
done
save; cat $W/times.txt; tail -n 2 $W/frost_install_a.txt
