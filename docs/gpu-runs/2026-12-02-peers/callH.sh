#!/usr/bin/env bash
# Device call H (2026-12-02, fourth session), right after the three calls that left FROST's
# wheels in /tmp/fp: one run of the landed kernels with every peer. rime (binary rime_f2i: main
# plus the counted-up step loop) before and after the peers, FROST, PyTorch (FLASH, EFFICIENT,
# CUDNN) and the cuDNN frontend on the same cases.json, then main before the change (rime_base,
# eb6d590) for the A/B of the step loop.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/wh; mkdir -p $W
save() { tar -czf $OUT/callH.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; chmod +x $D/rime_f2i $D/rime_base
frostinst() { cp .fppart03/part03 /tmp/fp/ && cat /tmp/fp/part00 /tmp/fp/part01 /tmp/fp/part02 /tmp/fp/part03 > /tmp/frost_all.tar \
  && echo "b5f5b9cec1981b7d67f3c52b10e7818f175b8075090d1f4760dbfc3d925714d4  /tmp/frost_all.tar" | sha256sum -c \
  && mkdir -p /tmp/fs && tar -xf /tmp/frost_all.tar -C /tmp/fs && bash /tmp/fs/.frostA/install_a.sh && bash /tmp/fs/.frostB/install_b.sh; }
step frost_install frostinst
step bench_a $D/rime_f2i bench --suite standard --out $W/a
cp $W/a/cases.json $W/cases.json
frost() { PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages timeout 200 python3 /tmp/fs/.frostB/frost_peer.py $W/cases.json > $W/frost.jsonl; }
step frost frost
step torch python3 $D/torch_sdpa_bwd.py $W/cases.json
cp $W/torch.txt $W/torch.jsonl
cudnnpeer() { python3 -m pip install -q --no-deps --no-index --target /tmp/fe /tmp/fs/.frostB/nvidia_cudnn_frontend-1.32.0-*.whl && PYTHONPATH=/tmp/fe timeout 120 python3 $D/cudnn_fe_sdpa_bwd.py $W/cases.json > $W/cudnn.jsonl; }
step cudnn cudnnpeer
step bench_b $D/rime_f2i bench --suite standard --out $W/b
step bench_base $D/rime_base bench --suite standard --out $W/base
save
cat $W/times.txt; tail -n 3 $W/frost_install.txt; wc -l $W/*.jsonl; tail -n 3 $W/frost.txt $W/cudnn.txt
