#!/usr/bin/env bash
# Device call L2 (2026-12-03 night), right after L1 on the same machine: the second half of
# FROST's compiler library and the rest of its part A (install_a.sh), then ncu --set full of the
# d256 32 x 64 main kernel of rime_y (905a96c) on b4 h16 s2048 without a bias (two_kernel).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.dev2; W=/tmp/wl2; mkdir -p $W
save() { tar -czf $OUT/callL2.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; xz -dc $D/rime_y.xz > /tmp/rime_y; chmod +x /tmp/rime_y; Y=/tmp/rime_y
fa() { test -f /tmp/ir.part00 || { echo "L1's half is not on this machine"; return 3; }
  mkdir -p /tmp/fa && cp .frostA2/* /tmp/fa/ && cat /tmp/ir.part00 /tmp/fa/ir.part01 > /tmp/fa/ir.so.xz \
  && echo "$(cat $D/ir.sha256)  /tmp/fa/ir.so.xz" | sha256sum -c && bash /tmp/fa/install_a.sh; }
step frost_install_a fa
prof() { ncu --clock-control none -k regex:bwd_main --set full --import-source no -o $W/ncu_d256 -f \
    $Y bench --suite d256 --filter "b4 h16/16 s2048x2048 d256 bias=none det bf16" --warmup 0 --iters 1 --out $W/prof_d256
  ncu -i $W/ncu_d256.ncu-rep --page details --csv > $W/ncu_d256_details.csv
  ncu -i $W/ncu_d256.ncu-rep --page source --csv --print-source sass > $W/ncu_d256_sass.csv
  rm -f $W/ncu_d256.ncu-rep; }
step prof_d256 prof
save
cat $W/times.txt; cat $W/frost_install_a.txt; grep -E '"Duration"|Registers Per|Achieved Occ' $W/ncu_d256_details.csv | head
