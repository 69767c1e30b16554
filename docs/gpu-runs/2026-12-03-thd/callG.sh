#!/usr/bin/env bash
# Device call G (2026-12-03): ragged (THD) tensors on the sm120 engine, binary rime_t (the tree
# of this directory's README). Correctness: the THD sweep cases (small, with guard zones, every
# route, bf16 and f16; then full size), the hostile-offsets table (selftest --ragged), the THD
# fixtures and the real cuDNN THD dump through `rime run` on every sm120 route against the CPU
# engine, compute-sanitizer on small THD cases, and the whole small sweep and determinism table
# (the kernels changed for every layout). Timing: `rime bench --suite thd` with the cuDNN
# frontend (1.32 wheel, carried) and torch varlen_attn on the same cases.json, rime repeated.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/wg; mkdir -p $W; R=$D/rime_t
save() { tar -czf $OUT/callG.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; chmod +x $R
step selftest_thd_small $R selftest --small --guards --filter thd --require-gpu
step ragged $R selftest --ragged --require-gpu
step fixtures python3 docs/gpu-runs/2026-12-03-thd/thd_compare.py $R $W/fx tests/fixtures/valid/bwd_thd_*.json tests/fixtures/valid/fwd_thd_varlen_stats.json tests/fixtures/valid/bwd_ragged_thd_offsets.json tests/fixtures/cudnn/real/bwd_thd_ragged.build_plans.json
step bench_thd $R bench --suite thd --out $W/thd
fe() { python3 -m pip install -q --no-deps --no-index --target /tmp/fe $D/fe/nvidia_cudnn_frontend-1.32.0-*.whl && PYTHONPATH=/tmp/fe timeout 240 python3 benches/cudnn_fe_thd_bwd.py $W/thd/cases.json --check > $W/cudnn_thd.jsonl; }
step cudnn_thd fe
tv() { timeout 200 python3 benches/torch_varlen_thd_bwd.py $W/thd/cases.json > $W/torch_thd.jsonl; }
step torch_thd tv
step bench_thd_repeat $R bench --suite thd --out $W/thdr
step selftest_thd_full $R selftest --guards --filter thd --require-gpu
step san_memcheck compute-sanitizer --tool memcheck --print-limit 20 $R selftest --small --filter thd-d64v64 --require-gpu
step san_racecheck compute-sanitizer --tool racecheck --print-limit 20 $R selftest --small --filter thd-d128v128-padding-causal/bf16 --require-gpu
step selftest_small_guards $R selftest --small --guards --require-gpu
step determinism $R selftest --determinism --small --require-gpu
save
cat $W/times.txt; tail -n 2 $W/selftest_*.txt $W/ragged.txt $W/determinism.txt $W/san_*.txt; grep -h FAIL $W/selftest*.txt $W/ragged.txt | head; head -c 1500 $W/fixtures.txt; wc -l $W/*.jsonl; head -c 600 $W/cudnn_thd.jsonl
