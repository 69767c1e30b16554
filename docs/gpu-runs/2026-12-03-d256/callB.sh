#!/usr/bin/env bash
# Device call B (2026-12-03), right after three calls that left FROST's wheels in /tmp/fp: the
# d256 envelope and the vectorised dbias_reduce.cu (binary rime_new) against main before this
# session (rime_base, 5e3d7ba). The d256 suite with FROST, the cuDNN frontend and PyTorch on the
# same cases.json (rime before and after the peers); the deterministic broadcast rows of the
# standard suite on rime_new, rime_base, rime_new (the A/B of the reduction); ncu kernel times
# of one such row on both binaries.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.device; W=/tmp/wb; mkdir -p $W
save() { tar -czf $OUT/callB.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; chmod +x $D/rime_new $D/rime_base
frostinst() { cp .fppart03/part03 /tmp/fp/ && cat /tmp/fp/part00 /tmp/fp/part01 /tmp/fp/part02 /tmp/fp/part03 > /tmp/frost_all.tar \
  && echo "$(cat $D/frost.sha256)  /tmp/frost_all.tar" | sha256sum -c \
  && mkdir -p /tmp/fs && tar -xf /tmp/frost_all.tar -C /tmp/fs && bash /tmp/fs/.frostA/install_a.sh && bash /tmp/fs/.frostB/install_b.sh; }
step frost_install frostinst
step bench_d256 $D/rime_new bench --suite d256 --out $W/d256
cp $W/d256/cases.json $W/cases.json
frost() { PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages timeout 200 python3 /tmp/fs/.frostB/frost_peer.py $W/cases.json > $W/frost.jsonl; }
step frost frost
cudnnpeer() { python3 -m pip install -q --no-deps --no-index --target /tmp/fe /tmp/fs/.frostB/nvidia_cudnn_frontend-1.32.0-*.whl && PYTHONPATH=/tmp/fe timeout 120 python3 $D/cudnn_fe_sdpa_bwd.py $W/cases.json > $W/cudnn.jsonl; }
step cudnn cudnnpeer
step torch timeout 120 python3 $D/torch_sdpa_bwd.py $W/cases.json > $W/torch.jsonl
step bench_d256_repeat $D/rime_new bench --suite d256 --out $W/d256r
F="bias=broadcast det"
step ab_new1 $D/rime_new bench --suite standard --filter "$F" --out $W/ab_new1
step ab_base $D/rime_base bench --suite standard --filter "$F" --out $W/ab_base
step ab_new2 $D/rime_new bench --suite standard --filter "$F" --out $W/ab_new2
R="b4 h16/16 s2048x2048 d128 bias=broadcast det bf16"
step prof_new ncu --clock-control none --metrics gpu__time_duration.sum --csv $D/rime_new bench --suite standard --filter "$R" --warmup 0 --iters 1 --out $W/prof_new
step prof_base ncu --clock-control none --metrics gpu__time_duration.sum --csv $D/rime_base bench --suite standard --filter "$R" --warmup 0 --iters 1 --out $W/prof_base
save
cat $W/times.txt; wc -l $W/*.jsonl; grep -h "rime_dbias_reduce" $W/prof_*.txt | head -4
