#!/usr/bin/env bash
# Device call B, right after A on the same machine (carry .device and .frostA2): FROST's part A
# (A's half of the compiler library and .frostA2's), then the same guards on rime_d64kv, and the
# thd suite's d64 rows on rime_head, rime_d64k and rime_d64kv (own route choices).
source docs/gpu-runs/2026-12-05-d256/lib.sh B
fa() { test -f /tmp/ir.part00 || { echo "A's half is not on this machine"; return 3; }
  mkdir -p /tmp/fa && cp .frostA2/* /tmp/fa/ && cat /tmp/ir.part00 .frostA2/ir.part01 > /tmp/fa/ir.so.xz \
  && echo "$(cat .frostA2/ir.sha256)  /tmp/fa/ir.so.xz" | sha256sum -c && bash /tmp/fa/install_a.sh; }
step frost_install_a 120 fa
step guards_d64kv 200 /tmp/rime_d64kv selftest --small --guards --require-gpu --filter d64v64
step guards_d40_d64kv 80 /tmp/rime_d64kv selftest --small --guards --require-gpu --filter pad-d40
step det_d64kv 80 /tmp/rime_d64kv selftest --determinism --small
for b in head d64k d64kv; do step thd_$b 60 /tmp/rime_$b bench --suite thd --filter d64 --out $W/thd_$b; done
save; cat $W/times.txt; tail -n 2 $W/frost_install_a.txt; tail -qn 1 $W/guards_*.txt; tail -qn 2 $W/det_*.txt
