#!/usr/bin/env bash
# Device call I, right after H (carry .device and .frostA2): FROST's part A.
source docs/gpu-runs/2026-12-05-d256/lib.sh I
fa() { test -f /tmp/ir.part00 || { echo "H's half is not on this machine"; return 3; }
  mkdir -p /tmp/fa && cp .frostA2/* /tmp/fa/ && cat /tmp/ir.part00 .frostA2/ir.part01 > /tmp/fa/ir.so.xz \
  && echo "$(cat .frostA2/ir.sha256)  /tmp/fa/ir.so.xz" | sha256sum -c && bash /tmp/fa/install_a.sh; }
step frost_install_a 120 fa; cat $W/times.txt; tail -n 2 $W/frost_install_a.txt
