#!/usr/bin/env bash
# Device call G (2026-12-01, third session), after three calls that left FROST's wheels in
# /tmp/fp: the redesign with the bias tile staged in shared memory (binary rime_v3): selftest
# against the CPU engine, the standard suite, the FROST peer on the same cases.json, the main
# binary for the A/B, determinism and sanitizers on the bias kernels.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/wg; mkdir -p $W
save() { tar -czf $OUT/callG.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; chmod +x $D/rime_v3 .devmain/rime_main
frostinst() { cp .fppart03/part03 /tmp/fp/ && cat /tmp/fp/part00 /tmp/fp/part01 /tmp/fp/part02 /tmp/fp/part03 > /tmp/frost_all.tar \
  && echo "b5f5b9cec1981b7d67f3c52b10e7818f175b8075090d1f4760dbfc3d925714d4  /tmp/frost_all.tar" | sha256sum -c \
  && mkdir -p /tmp/fs && tar -xf /tmp/frost_all.tar -C /tmp/fs && bash /tmp/fs/.frostA/install_a.sh && bash /tmp/fs/.frostB/install_b.sh; }
step frost_install frostinst
step selftest_small_guards $D/rime_v3 selftest --small --guards --require-gpu
step bench_v3 $D/rime_v3 bench --suite standard --out $W/v3
cp $W/v3/cases.json $W/cases.json
frost() { PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages timeout 200 python3 /tmp/fs/.frostB/frost_peer.py $W/cases.json > $W/frost.jsonl; }
step frost frost
step bench_main .devmain/rime_main bench --suite standard --out $W/main
step determinism $D/rime_v3 selftest --determinism --repeats 20 --require-gpu
step san_memcheck compute-sanitizer --tool memcheck --print-limit 20 $D/rime_v3 selftest --small --filter bias --require-gpu
step san_racecheck compute-sanitizer --tool racecheck --print-limit 20 $D/rime_v3 selftest --small --filter bias --require-gpu
save
cat $W/times.txt; tail -n 2 $W/selftest_small_guards.txt $W/determinism.txt $W/san_*.txt; grep -h FAIL $W/selftest*.txt | head; wc -l $W/frost.jsonl
