#!/usr/bin/env bash
# Device call E (2026-12-03), right after three calls that left FROST's wheels in /tmp/fp:
# binary rime_e (main with `bench --suite sinks`), the sinks suite (every row with and without
# an attention sink + dSink) and FROST on the same cases.json (rime's copy of the FROST peer
# script passes sink logits on the sink rows), rime again for the repeat ratio.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/we; mkdir -p $W
save() { tar -czf $OUT/callE.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; chmod +x $D/rime_e
frostinst() { cp .fppart03/part03 /tmp/fp/ && cat /tmp/fp/part00 /tmp/fp/part01 /tmp/fp/part02 /tmp/fp/part03 > /tmp/frost_all.tar \
  && echo "$(cat $D/frost.sha256)  /tmp/frost_all.tar" | sha256sum -c \
  && mkdir -p /tmp/fs && tar -xf /tmp/frost_all.tar -C /tmp/fs && bash /tmp/fs/.frostA/install_a.sh && bash /tmp/fs/.frostB/install_b.sh; }
step frost_install frostinst
step bench_sinks $D/rime_e bench --suite sinks --out $W/sinks
frost() { PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages timeout 200 python3 $D/frost_peer_sink.py $W/sinks/cases.json; }
step frost frost
step bench_sinks_repeat $D/rime_e bench --suite sinks --out $W/sinksr
save
cat $W/times.txt; grep -c '"ms"' $W/frost.txt; grep -h refused $W/frost.txt | head -3
