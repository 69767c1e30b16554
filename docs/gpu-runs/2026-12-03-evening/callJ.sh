#!/usr/bin/env bash
# Device call J (2026-12-03 evening): rime_w = b44cc9e (feab07f + the -inf sink fix) (stripped release build) and its Python
# wheel. Correctness: the 20-repeat determinism table (now with THD rows), compute-sanitizer
# memcheck / racecheck on the small determinism table, the whole small sweep with guards (the
# kernels changed in review commits d93d598 and 4c35809 after call H), the hostile offsets.
# Timing: the thd suite (the cost model's new ragged bound picks relay for every deterministic
# row) with the cuDNN frontend and torch varlen_attn peers on the same cases.json, rime again.
# Python: crates/python/gpu_check.sh (incl. the THD GPU test). Profile: ncu --set full of the
# d256 main kernel (no bias, non-deterministic) and of one THD main kernel.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/wj; mkdir -p $W; R=$D/rime_w
save() { tar -czf $OUT/callJ.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; chmod +x $R
step determinism $R selftest --determinism --repeats 20 --require-gpu
step san_memcheck compute-sanitizer --tool memcheck --print-limit 20 $R selftest --determinism --small --require-gpu
step san_racecheck compute-sanitizer --tool racecheck --print-limit 20 $R selftest --determinism --small --require-gpu
step bench_thd $R bench --suite thd --out $W/thd
fe() { python3 -m pip install -q --no-deps --no-index --target /tmp/fe $D/fe/nvidia_cudnn_frontend-1.32.0-*.whl && PYTHONPATH=/tmp/fe timeout 240 python3 benches/cudnn_fe_thd_bwd.py $W/thd/cases.json --check > $W/cudnn_thd.jsonl; }
step cudnn_thd fe
tv() { timeout 200 python3 benches/torch_varlen_thd_bwd.py $W/thd/cases.json > $W/torch_thd.jsonl; }
step torch_thd tv
step bench_thd_repeat $R bench --suite thd --out $W/thdr
pyc() { mkdir -p $W/py && bash crates/python/gpu_check.sh $W/py; }
step python pyc
prof() { local tag=$1 suite=$2 filt=$3
  ncu --clock-control none -k regex:bwd_main --set full --import-source no -o $W/ncu_$tag -f \
    $R bench --suite $suite --filter "$filt" --warmup 0 --iters 1 --out $W/prof_$tag
  ncu -i $W/ncu_$tag.ncu-rep --page details --csv > $W/ncu_${tag}_details.csv
  ncu -i $W/ncu_$tag.ncu-rep --page source --csv --print-source sass > $W/ncu_${tag}_sass.csv
  rm -f $W/ncu_$tag.ncu-rep; }
step prof_d256 prof d256 d256 "b4 h16/16 s2048x2048 d256 bias=none bf16"
step edge $R selftest --edge --require-gpu
step ragged $R selftest --ragged --require-gpu
step selftest_small_guards $R selftest --small --guards --require-gpu
save
cat $W/times.txt; tail -n 2 $W/determinism.txt $W/san_*.txt $W/selftest_small_guards.txt $W/ragged.txt; grep -h FAIL $W/selftest*.txt $W/determinism.txt | head; tail -n 3 $W/py/summary.txt; wc -l $W/*.jsonl; grep -E '"Duration"|Registers Per|Achieved Occ' $W/ncu_d256_details.csv | head
