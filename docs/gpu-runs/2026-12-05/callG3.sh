#!/usr/bin/env bash
# Device call G3, right after G2 on the same machine: FROST's part B, then rime_final, FROST, the
# cuDNN frontend and PyTorch on the same cases in one call: the d256 suite on rime's own choices,
# FROST on its cases.json and the sinks suite (rime's sink copy of the FROST peer script), the
# cuDNN frontend on the d256 cases, rime_final again. (PyTorch and the rime_noil A/B were cut to
# fit the device time left: G2's FROST install had failed and the machine had to start again.)
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
step d256_chosen_r 120 $F bench --suite d256 --out $W/d256_chosen_r
save; cat $W/times.txt; wc -l $W/*.jsonl; grep -h refused $W/frost_*.jsonl | head -3
