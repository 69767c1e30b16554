#!/usr/bin/env bash
# Device call D (2026-12-01, main after the cli18 / distributed merges): the Python package
# again (the Graph.execute fix, the host-overhead breakdown, distributed tests' GPU skips), the
# real cuDNN dumps read directly by `rime run` on sm120 against the CPU engine and against
# their native twins, `--json` documents from a GPU run. Tarred after every step.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/w; mkdir -p $W/json
save() { tar -czf $OUT/callD.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; chmod +x $D/rime
step python bash crates/python/gpu_check.sh $W/python
dumps() {
  for f in tests/fixtures/cudnn/real/*.json; do
    g=$(basename $f .json); c=${g%%.*}; t=tests/fixtures/cudnn/native/$c.json
    $D/rime run $f --target cpu --seed 5 --outputs /tmp/$g.cpu.st > /tmp/$g.cpu.txt 2>&1 || { echo "$g cpu rc=$?: $(grep -E 'CPU0|SMX|error' /tmp/$g.cpu.txt | head -n 2 | tr '\n' ' ')"; continue; }
    $D/rime run $f --target auto --seed 5 --json --outputs /tmp/$g.gpu.st > $W/json/$g.run.json 2> /tmp/$g.gpu.err || { echo "$g gpu rc=$?: $(tail -n 3 /tmp/$g.gpu.err | tr '\n' ' ')"; continue; }
    $D/rime run $t --target auto --seed 5 --outputs /tmp/$g.twin.st > /tmp/$g.twin.txt 2>&1 || { echo "$g twin rc=$?"; continue; }
    echo "$g: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['status'], ' '.join(n['engine']+'/'+str(n.get('route')) for n in d['nodes']))" $W/json/$g.run.json) | vs cpu $(python3 $D/compare_st.py /tmp/$g.cpu.st /tmp/$g.gpu.st | tail -n 1) | vs twin on gpu $(python3 $D/compare_st.py /tmp/$g.twin.st /tmp/$g.gpu.st | tail -n 1)"
  done
}
step dumps dumps
step selftest_json sh -c "$D/rime selftest --small --require-gpu --json > $W/json/selftest_small.json"
step check_many $D/rime check tests/fixtures/cudnn/real/bwd_basic.build_plans.json tests/fixtures/valid/bwd_fp16.json --target auto --require-engine sm120
save
cat $W/times.txt; cat $W/dumps.txt; tail -n 3 $W/selftest_json.txt $W/check_many.txt; python3 -c "import json; d=json.load(open('$W/json/selftest_small.json')); print({k: d[k] for k in d if not isinstance(d[k], list)})"; tail -n 30 $W/python/summary.txt
