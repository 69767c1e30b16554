#!/usr/bin/env bash
# Device call L (2026-12-02, fourth session): Nsight Compute on the main backward kernel of three
# no-bias rows of the standard suite (binary rime_ord2; its kernels are main's): d128 MHA (the
# reference the 192/128 and GQA targets are measured against), 192/128, and GQA 32/8 - the
# profile behind the two missed "as far ahead of FROST as d128" targets.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=$OUT/L; mkdir -p $W
prof() { local tag=$1 filt=$2
  ncu --clock-control none -k rime_bwd_main -c 1 --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --section SchedulerStats --csv --page details \
    $D/rime_ord2 bench --suite standard --filter "$filt" --warmup 0 --iters 1 --out /tmp/p_$tag > $W/ncu_$tag.csv 2> $W/ncu_$tag.err
  echo "$tag rc=$?"; }
chmod +x $D/rime_ord2
prof d128 "b4 h16/16 s2048x2048 d128 bias=none bf16"
prof d192 "b2 h16/16 s4096x4096 d192/128 bias=none bf16"
prof gqa "b4 h32/8 s2048x2048 d128 bias=none bf16"
ls -la $W
