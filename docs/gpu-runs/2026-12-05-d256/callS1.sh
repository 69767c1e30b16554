#!/usr/bin/env bash
# Device call S1, right after S0 on the same machine: FROST's part A (the compiler library from
# S0's half and .frostA2's, its wheels, install_a.sh; carry .frostA2), for R3. (Planned as one
# call with .frostA1 too, but the checkout is 16 MB, not 2.6: the carry passed 64 MiB.)
source docs/gpu-runs/2026-12-05-d256/lib.sh S1
fa() { mkdir -p /tmp/fa && cp .frostA2/* /tmp/fa/ && cat /tmp/ir.part00 .frostA2/ir.part01 > /tmp/fa/ir.so.xz \
  && echo "$(cat .frostA2/ir.sha256)  /tmp/fa/ir.so.xz" | sha256sum -c && bash /tmp/fa/install_a.sh; }
step frost_install_a 120 fa; cat $W/times.txt; tail -n 3 $W/frost_install_a.txt
