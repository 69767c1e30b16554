#!/usr/bin/env bash
# Device call L3 (2026-12-03 night), right after L2 on the same machine: FROST's part B, then the
# d256 and sinks suites on rime_y (905a96c) pinned to two_kernel and to atomic, FROST on the same
# cases.json (rime's sink copy of the peer script for the sinks suite), the cuDNN frontend and
# PyTorch on the d256 cases, rime_y on its own choices and two_kernel again (the repeat).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.dev2; W=/tmp/wl3; mkdir -p $W
save() { tar -czf $OUT/callL3.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; Y=/tmp/rime_y; test -x $Y || { xz -dc $D/rime_y.xz > $Y; chmod +x $Y; }
step frost_install_b bash .frostB/install_b.sh
FP="PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages"
step d256_two_kernel $Y bench --suite d256 --route two_kernel --out $W/d256_two_kernel
step d256_atomic $Y bench --suite d256 --route atomic --out $W/d256_atomic
frost() { env $FP timeout 200 python3 .frostB/frost_peer.py $W/d256_two_kernel/cases.json > $W/frost_d256.jsonl; }
step frost_d256 frost
step sinks_two_kernel $Y bench --suite sinks --route two_kernel --out $W/sinks_two_kernel
step sinks_atomic $Y bench --suite sinks --route atomic --out $W/sinks_atomic
frosts() { env $FP timeout 200 python3 $D/frost_peer_sink.py $W/sinks_two_kernel/cases.json > $W/frost_sinks.jsonl; }
step frost_sinks frosts
step sinks_chosen $Y bench --suite sinks --out $W/sinks_chosen
fe() { python3 -m pip install -q --no-deps --no-index --target /tmp/fe .frostB/nvidia_cudnn_frontend-1.32.0-*.whl && PYTHONPATH=/tmp/fe timeout 120 python3 $D/cudnn_fe_sdpa_bwd.py $W/d256_two_kernel/cases.json > $W/cudnn_d256.jsonl; }
step cudnn_d256 fe
tp() { timeout 120 python3 $D/torch_sdpa_bwd.py $W/d256_two_kernel/cases.json > $W/torch_d256.jsonl; }
step torch_d256 tp
step d256_chosen $Y bench --suite d256 --out $W/d256_chosen
step d256_two_kernel_r $Y bench --suite d256 --route two_kernel --out $W/d256_two_kernel_r
save
cat $W/times.txt; wc -l $W/*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
