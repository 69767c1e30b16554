#!/usr/bin/env bash
# Device call F2 (2026-12-01, third session), right after the three calls that left FROST's
# wheels in /tmp/fp (the tree plus all of them exceed one 64 MiB transfer): FROST installed,
# then one run of rime (redesign, twice: before and after the peers), the FROST, PyTorch and
# cuDNN-frontend peers on the same cases.json, and the main-branch binary for the A/B.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/w2; mkdir -p $W
save() { tar -czf $OUT/callF2.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; chmod +x $D/rime_v2 .devmain/rime_main
frostinst() { cp .fppart03/part03 /tmp/fp/ && cat /tmp/fp/part00 /tmp/fp/part01 /tmp/fp/part02 /tmp/fp/part03 > /tmp/frost_all.tar \
  && echo "b5f5b9cec1981b7d67f3c52b10e7818f175b8075090d1f4760dbfc3d925714d4  /tmp/frost_all.tar" | sha256sum -c \
  && mkdir -p /tmp/fs && tar -xf /tmp/frost_all.tar -C /tmp/fs && bash /tmp/fs/.frostA/install_a.sh && bash /tmp/fs/.frostB/install_b.sh; }
step frost_install frostinst
step bench_v2a $D/rime_v2 bench --suite standard --out $W/v2a
cp $W/v2a/cases.json $W/cases.json
frost() { PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages timeout 240 python3 /tmp/fs/.frostB/frost_peer.py $W/cases.json > $W/frost.jsonl; }
step frost frost
step torch python3 $D/torch_sdpa_bwd.py $W/cases.json
cp $W/torch.txt $W/torch.jsonl
cudnnpeer() { python3 -m pip install -q --no-deps --no-index --target /tmp/fe /tmp/fs/.frostB/nvidia_cudnn_frontend-1.32.0-*.whl && PYTHONPATH=/tmp/fe timeout 150 python3 $D/cudnn_fe_sdpa_bwd.py $W/cases.json > $W/cudnn.jsonl; }
step cudnn cudnnpeer
step bench_v2b $D/rime_v2 bench --suite standard --out $W/v2b
step bench_main .devmain/rime_main bench --suite standard --out $W/main
save
cat $W/times.txt; tail -n 4 $W/frost_install.txt; head -c 600 $W/frost.jsonl; echo; wc -l $W/*.jsonl; tail -n 3 $W/frost.txt $W/cudnn.txt
