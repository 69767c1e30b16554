#!/usr/bin/env bash
# Device call G3, right after G2 on the same machine: FROST's part B, then rime_final, FROST, the
# cuDNN frontend and PyTorch on the same cases in one call: the d256 suite on rime's own choices,
# FROST on its cases.json and the sinks suite (rime's sink copy of the FROST peer script), then
# rime_noil (product 1's S and dP one after the other, as before sdp_k16: on the H200's sm_90
# code, interleaved by ptxas either way, the two should tie) and rime_final again.
source docs/gpu-runs/2026-12-05/lib.sh G3
D=.dev3; FP="PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages"
step frost_install_b 120 bash .frostB/install_b.sh
step d256_chosen 120 $F bench --suite d256 --out $W/d256_chosen
frost() { env $FP python3 .frostB/frost_peer.py $W/d256_chosen/cases.json > $W/frost_d256.jsonl; }
step frost_d256 200 frost
step sinks_chosen 60 $F bench --suite sinks --out $W/sinks_chosen
frosts() { env $FP python3 $D/frost_peer_sink.py $W/sinks_chosen/cases.json > $W/frost_sinks.jsonl; }
step frost_sinks 200 frosts
fe() { python3 -m pip install -q --no-deps --no-index --target /tmp/fe .frostB/nvidia_cudnn_frontend-1.32.0-*.whl && PYTHONPATH=/tmp/fe python3 $D/cudnn_fe_sdpa_bwd.py $W/d256_chosen/cases.json > $W/cudnn_d256.jsonl; }
step cudnn_d256 120 fe
tp() { python3 $D/torch_sdpa_bwd.py $W/d256_chosen/cases.json > $W/torch_d256.jsonl; }
step torch_d256 120 tp
step d256_noil 120 $N bench --suite d256 --out $W/d256_noil
step d256_chosen_r 120 $F bench --suite d256 --out $W/d256_chosen_r
save; cat $W/times.txt; wc -l $W/*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
