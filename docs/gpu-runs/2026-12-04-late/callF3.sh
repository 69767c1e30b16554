#!/usr/bin/env bash
# Device call F3 (2026-12-04, late), right after F2 on the same machine: FROST's part B, then
# rime_final and FROST on the same cases in one call: the d256 suite (rime on its own choices,
# then pinned to two_kernel), FROST on its cases.json, the cuDNN frontend and PyTorch on them;
# the sinks suite on rime's own choices and FROST (rime's sink copy of the FROST peer script).
# Added 2026-12-05 (not run yet): rime_noil, the same tree with product 1's S and dP issued
# one product after the other as before sdp_k16, on the d256 suite between the two rime_final
# runs: on the H200 (sm_90 code, interleaved by ptxas either way) the two should tie.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
D=.dev3; W=/tmp/wf3; mkdir -p $W
save() { tar -czf $OUT/callF3.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1; F=/tmp/rime_final
test -x $F || { xz -dc .device/x/rime_final.xz > $F; chmod +x $F; }
N=/tmp/rime_noil; xz -dc .device/x/rime_noil.xz > $N; chmod +x $N
sha256sum $F $N > $W/sha256.txt
step frost_install_b bash .frostB/install_b.sh
FP="PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages"
step d256_chosen $F bench --suite d256 --out $W/d256_chosen
frost() { env $FP timeout 200 python3 .frostB/frost_peer.py $W/d256_chosen/cases.json > $W/frost_d256.jsonl; }
step frost_d256 frost
step sinks_chosen $F bench --suite sinks --out $W/sinks_chosen
frosts() { env $FP timeout 200 python3 $D/frost_peer_sink.py $W/sinks_chosen/cases.json > $W/frost_sinks.jsonl; }
step frost_sinks frosts
fe() { python3 -m pip install -q --no-deps --no-index --target /tmp/fe .frostB/nvidia_cudnn_frontend-1.32.0-*.whl && PYTHONPATH=/tmp/fe timeout 120 python3 $D/cudnn_fe_sdpa_bwd.py $W/d256_chosen/cases.json > $W/cudnn_d256.jsonl; }
step cudnn_d256 fe
tp() { timeout 120 python3 $D/torch_sdpa_bwd.py $W/d256_chosen/cases.json > $W/torch_d256.jsonl; }
step torch_d256 tp
step d256_noil $N bench --suite d256 --out $W/d256_noil
step d256_chosen_r $F bench --suite d256 --out $W/d256_chosen_r
save
cat $W/times.txt; wc -l $W/*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
