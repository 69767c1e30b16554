#!/usr/bin/env bash
# Device call F3 (2026-12-01, third session): correctness of the redesign (selftest sweeps,
# determinism, sanitizers), H200-tuned configurations of the redesign and of
# main, and Nsight Compute profiles of the redesigned d128 kernel (no bias, per-batch bias).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/w3; mkdir -p $W
save() { tar -czf $OUT/callF3.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
chmod +x $D/rime_v2 .devmain/rime_main
step selftest_small_guards $D/rime_v2 selftest --small --guards --require-gpu
step selftest_full $D/rime_v2 selftest --require-gpu
step edge_resources $D/rime_v2 selftest --edge --resources --require-gpu
step determinism $D/rime_v2 selftest --determinism --repeats 20 --require-gpu
for tool in memcheck racecheck synccheck; do
  step san_$tool compute-sanitizer --tool $tool --print-limit 20 $D/rime_v2 selftest --small --filter bf16 --require-gpu
done
step tuned_v2 $D/rime_v2 bench --suite standard --tuning h200 --out $W/tuned_v2
step tuned_main .devmain/rime_main bench --suite standard --tuning h200 --filter d1 --out $W/tuned_main
prof() { local tag=$1 filt=$2
  ncu --clock-control none -k rime_bwd_main --set full --import-source no -o $W/ncu_$tag -f \
    $D/rime_v2 bench --suite standard --filter "$filt" --warmup 0 --iters 1 --out $W/prof_$tag
  ncu -i $W/ncu_$tag.ncu-rep --page details --csv > $W/ncu_${tag}_details.csv
  ncu -i $W/ncu_$tag.ncu-rep --page source --csv --print-source sass > $W/ncu_${tag}_sass.csv
  rm -f $W/ncu_$tag.ncu-rep; }
step prof_nobias prof nobias "b4 h16/16 s2048x2048 d128 bias=none bf16"
step prof_batch prof batch "b4 h16/16 s2048x2048 d128 bias=batch bf16"
step prof_d64 prof d64 "b2 h16/16 s4096x4096 d64 bias=none bf16"
save
cat $W/times.txt; grep -E "Duration|L1/TEX Hit|Throughput|Registers" $W/ncu_nobias_details.csv | head -20; tail -n 3 $W/selftest_small_guards.txt $W/selftest_full.txt $W/edge_resources.txt $W/determinism.txt $W/san_*.txt; grep -h FAIL $W/selftest*.txt | head
