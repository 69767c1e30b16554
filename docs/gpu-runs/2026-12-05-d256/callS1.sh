#!/usr/bin/env bash
# Device call S1: FROST's part A (both halves of its compiler library, its wheels, install_a.sh),
# carried in one call (.frostA1 and .frostA2 with this 2.6 MB checkout stay under 64 MiB), for
# R3 on the same machine.
source docs/gpu-runs/2026-12-05-d256/lib.sh S1
fa() { mkdir -p /tmp/fa && cp .frostA2/* /tmp/fa/ && cat .frostA1/ir.part00 .frostA2/ir.part01 > /tmp/fa/ir.so.xz \
  && echo "$(cat .frostA2/ir.sha256)  /tmp/fa/ir.so.xz" | sha256sum -c && bash /tmp/fa/install_a.sh; }
step frost_install_a 120 fa; cat $W/times.txt; tail -n 3 $W/frost_install_a.txt
