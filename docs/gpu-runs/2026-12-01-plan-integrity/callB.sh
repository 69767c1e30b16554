#!/usr/bin/env bash
# Device call B (issue 13): the relay A/B (ticket vs blockIdx order, new and old binary, A-B-A)
# and the H200-tuned A/B now that the tuned kernel really runs. Results tarred to $OUT.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/wb; mkdir -p $W
save() { tar -czf $OUT/callB.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
chmod +x $D/rime $D/rime_old
S="--suite standard --suites benches/gpu_suite.json"
step relay_new1 $D/rime bench $S --route relay --filter det --out $W/relay_new1
step relay_old $D/rime_old bench $S --route relay --filter det --out $W/relay_old
step relay_new2 $D/rime bench $S --route relay --filter det --out $W/relay_new2
step sm120_d1 $D/rime bench $S --filter d1 --out $W/sm120_d1
step h200_d1 $D/rime bench $S --filter d1 --tuning h200 --out $W/h200_d1
save
cat $W/times.txt; tail -n 2 $W/*.txt
