#!/usr/bin/env bash
# Device call F, right after E (carry .device and .frostA2): FROST's part A, then memcheck and
# racecheck of rime_db on the small sweep's broadcast-dBias cases (the reduction's reads).
source docs/gpu-runs/2026-12-05-d256/lib.sh F
fa() { test -f /tmp/ir.part00 || { echo "E's half is not on this machine"; return 3; }
  mkdir -p /tmp/fa && cp .frostA2/* /tmp/fa/ && cat /tmp/ir.part00 .frostA2/ir.part01 > /tmp/fa/ir.so.xz \
  && echo "$(cat .frostA2/ir.sha256)  /tmp/fa/ir.so.xz" | sha256sum -c && bash /tmp/fa/install_a.sh; }
step frost_install_a 120 fa
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step memcheck_bcast 150 $CS --tool memcheck /tmp/rime_db selftest --small --filter bcast
step racecheck_bcast 150 $CS --tool racecheck --racecheck-report all /tmp/rime_db selftest --small --filter window-bcast
save; cat $W/times.txt; tail -n 2 $W/frost_install_a.txt; tail -qn 3 $W/memcheck_bcast.txt $W/racecheck_bcast.txt
