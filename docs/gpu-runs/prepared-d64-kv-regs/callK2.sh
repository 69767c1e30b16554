#!/usr/bin/env bash
# Device call K2 (prepared 2026-12-05, not run), right after K1 on the same machine or alone:
# the thd suite against the cuDNN frontend and torch varlen_attn on the same cases.json, one
# call, rime run twice. The THD rows were last timed against cuDNN on 2026-12-03 (call G, an
# H200), before the band-walking dQ GEMM and the cost-model refit moved 8 of their 12 rows
# (R8: 0.744 of their time). FROST has no THD kernel of its own (its frontend sends ragged
# graphs to cuDNN's backend), so cuDNN-FE is the THD peer. Carry .device with rime_head.xz
# (or the binary K1 adopted, named rime_head) and the frontend wheel in .device/fe/
# (`pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp
# --platform manylinux_2_28_x86_64 -d .device/fe nvidia-cudnn-frontend==1.32.0`, 11 MB).
# Table: python3 benches/join_peers.py thd/results.json thd_joined.md thd_chart.svg cudnn_thd.jsonl
# torch_thd.jsonl --repeat thd_r/results.json (from the unpacked K2.tgz).
source docs/gpu-runs/2026-12-05-d256/lib.sh K2
H=/tmp/rime_head
step thd 60 $H bench --suite thd --out $W/thd
fe() { python3 -m pip install -q --no-deps --no-index --target /tmp/fe .device/fe/nvidia_cudnn_frontend-1.32.0-*.whl \
  && PYTHONPATH=/tmp/fe timeout 240 python3 benches/cudnn_fe_thd_bwd.py $W/thd/cases.json --check > $W/cudnn_thd.jsonl; }
step cudnn_thd 250 fe
tv() { timeout 200 python3 benches/torch_varlen_thd_bwd.py $W/thd/cases.json > $W/torch_thd.jsonl; }
step torch_thd 210 tv
step thd_r 60 $H bench --suite thd --out $W/thd_r
save; cat $W/times.txt; wc -l $W/*.jsonl; head -c 600 $W/cudnn_thd.jsonl
