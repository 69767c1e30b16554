#!/usr/bin/env bash
# Device call T2, right after T1 on the same machine (carry .frostA2 only: T1 left /tmp/rime_main,
# /tmp/rime_tile and FROST's first half there): FROST's part A, then the standard suite's biased
# d64 rows (atomic) and the per-batch biased rows pinned to atomic, on both, order tile, main.
source docs/gpu-runs/2026-12-05-d256/lib.sh T2
fa() { test -f /tmp/ir.part00 || { echo "T1's half is not on this machine"; return 3; }
  mkdir -p /tmp/fa && cp .frostA2/* /tmp/fa/ && cat /tmp/ir.part00 .frostA2/ir.part01 > /tmp/fa/ir.so.xz \
  && echo "$(cat .frostA2/ir.sha256)  /tmp/fa/ir.so.xz" | sha256sum -c && bash /tmp/fa/install_a.sh; }
step frost_install_a 150 fa
for b in tile main; do
  step d64b_$b 60 /tmp/rime_$b bench --suite standard --filter " d64 bias=b" --out $W/d64b_$b
  step batch_atomic_$b 90 /tmp/rime_$b bench --suite standard --filter "bias=batch" --route atomic --out $W/batch_atomic_$b
done
save; cat $W/times.txt; tail -n 2 $W/frost_install_a.txt
