#!/usr/bin/env bash
# Device call B2, right after B1 on the same machine (carry .frostA2 only: B1 left the binaries
# and FROST's first half in /tmp): FROST's part A; racecheck and synccheck of rime_final on the
# odd-length cases; the stall sites of the d128 atomic main kernel (ncu source view, the
# standard suite's b4 s2048 d128 no-bias row), for src_top.py (../2026-12-06-frost/).
source docs/gpu-runs/2026-12-05-d256/lib.sh B2
fa() { test -f /tmp/ir.part00 || { echo "B1's half is not on this machine"; return 3; }
  mkdir -p /tmp/fa && cp .frostA2/* /tmp/fa/ && cat /tmp/ir.part00 .frostA2/ir.part01 > /tmp/fa/ir.so.xz \
  && echo "$(cat .frostA2/ir.sha256)  /tmp/fa/ir.so.xz" | sha256sum -c && bash /tmp/fa/install_a.sh; }
step frost_install_a 120 fa
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step race 120 $CS --tool racecheck --racecheck-report all /tmp/rime_final selftest --small --require-gpu --filter s200
step sync 60 $CS --tool synccheck /tmp/rime_final selftest --small --require-gpu --filter s200
step src128 120 ncu --clock-control none -k regex:bwd_main --launch-count 1 --section SourceCounters --section WarpStateStats -o $W/src128 /tmp/rime_final bench --suite standard --filter "b4 h16/16 s2048x2048 d128 bias=none bf16" --warmup 0 --iters 1 --out $W/src128b
step src128_csv 60 ncu -i $W/src128.ncu-rep --page source --csv --print-source sass
step src128_det 60 ncu -i $W/src128.ncu-rep --page details --print-details all
rm -f $W/src128.ncu-rep
save; cat $W/times.txt; tail -n 2 $W/frost_install_a.txt $W/race.txt $W/sync.txt
