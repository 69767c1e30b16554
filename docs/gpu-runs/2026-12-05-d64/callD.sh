#!/usr/bin/env bash
# Device call D, after C on the same machine or alone (carry .device and .frostB, which holds the
# cuDNN frontend wheel): ../prepared-d64-kv-regs/callK2.sh with the wheel taken from .frostB. The
# thd suite on rime_head, the cuDNN frontend (FROST's THD path: its frontend sends ragged graphs
# to cuDNN's backend) and torch varlen_attn on its cases.json, rime_head again.
source docs/gpu-runs/2026-12-05-d256/lib.sh D
H=/tmp/rime_head
step thd 60 $H bench --suite thd --out $W/thd
fe() { python3 -m pip install -q --no-deps --no-index --target /tmp/fe .frostB/nvidia_cudnn_frontend-1.32.0-*.whl \
  && PYTHONPATH=/tmp/fe timeout 240 python3 benches/cudnn_fe_thd_bwd.py $W/thd/cases.json --check > $W/cudnn_thd.jsonl; }
step cudnn_thd 250 fe
tv() { timeout 200 python3 benches/torch_varlen_thd_bwd.py $W/thd/cases.json > $W/torch_thd.jsonl; }
step torch_thd 210 tv
step thd_r 60 $H bench --suite thd --out $W/thd_r
save; cat $W/times.txt; wc -l $W/*.jsonl; head -c 600 $W/cudnn_thd.jsonl
