#!/usr/bin/env bash
# Device call I (2026-12-02, fourth session), right after three calls that left FROST's wheels
# in /tmp/fp: the ordered_dbias route (binary rime_ord, built from f3fb2d9) —
# correctness (selftest sweep with guards, determinism with 20 repeats, sanitizers on the new
# kernels), the standard suite with FROST and the cuDNN frontend on the same cases.json (the
# deterministic broadcast rows now run), the suite pinned to ordered_dbias (its non-deterministic
# broadcast rows against atomic), and the H200-tuned configurations.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/wi; mkdir -p $W
save() { tar -czf $OUT/callI.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; chmod +x $D/rime_ord
frostinst() { cp .fppart03/part03 /tmp/fp/ && cat /tmp/fp/part00 /tmp/fp/part01 /tmp/fp/part02 /tmp/fp/part03 > /tmp/frost_all.tar \
  && echo "b5f5b9cec1981b7d67f3c52b10e7818f175b8075090d1f4760dbfc3d925714d4  /tmp/frost_all.tar" | sha256sum -c \
  && mkdir -p /tmp/fs && tar -xf /tmp/frost_all.tar -C /tmp/fs && bash /tmp/fs/.frostA/install_a.sh && bash /tmp/fs/.frostB/install_b.sh; }
step frost_install frostinst
step selftest_small_guards $D/rime_ord selftest --small --guards --require-gpu
step determinism $D/rime_ord selftest --determinism --repeats 20 --require-gpu
step bench_ord $D/rime_ord bench --suite standard --out $W/ord
cp $W/ord/cases.json $W/cases.json
frost() { PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages timeout 200 python3 /tmp/fs/.frostB/frost_peer.py $W/cases.json > $W/frost.jsonl; }
step frost frost
cudnnpeer() { python3 -m pip install -q --no-deps --no-index --target /tmp/fe /tmp/fs/.frostB/nvidia_cudnn_frontend-1.32.0-*.whl && PYTHONPATH=/tmp/fe timeout 120 python3 $D/cudnn_fe_sdpa_bwd.py $W/cases.json > $W/cudnn.jsonl; }
step cudnn cudnnpeer
step bench_pinned $D/rime_ord bench --suite standard --route ordered_dbias --out $W/pinned
step san_memcheck compute-sanitizer --tool memcheck --print-limit 20 $D/rime_ord selftest --small --filter ordered_dbias --require-gpu
step san_racecheck compute-sanitizer --tool racecheck --print-limit 20 $D/rime_ord selftest --small --filter ordered_dbias --require-gpu
step tuned $D/rime_ord bench --suite standard --tuning h200 --out $W/tuned
save
cat $W/times.txt; tail -n 2 $W/selftest_small_guards.txt $W/determinism.txt $W/san_*.txt; grep -h FAIL $W/selftest*.txt $W/determinism.txt | head; wc -l $W/*.jsonl
