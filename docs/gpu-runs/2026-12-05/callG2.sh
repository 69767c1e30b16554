#!/usr/bin/env bash
# Device call G2, right after G1 on the same machine: FROST's part A (the second half of its
# compiler library and the rest), then the standard suite on rime's own choices, main e81289f
# (base) and the committed kernels (final), for the record of the committed tree.
source docs/gpu-runs/2026-12-05/lib.sh G2
fa() { test -f /tmp/ir.part00 || { echo "G1's half is not on this machine"; return 3; }
  mkdir -p /tmp/fa && cp .frostA2/* /tmp/fa/ && cat /tmp/ir.part00 /tmp/fa/ir.part01 > /tmp/fa/ir.so.xz \
  && echo "$(cat .frostA2/ir.sha256)  /tmp/fa/ir.so.xz" | sha256sum -c && bash /tmp/fa/install_a.sh; }
step frost_install_a 120 fa
step std_final 150 $F bench --suite standard --out $W/std_final
step std_base 150 $B bench --suite standard --out $W/std_base
save; cat $W/times.txt
