#!/usr/bin/env bash
# Device call T2, prepared 2026-12-07 and NOT RUN (the session's device time ran out; superseded by
# call U1 of ../2026-12-07-close, which ran the whole guarded sweep on both io types): the guarded
# small sweep's fp16 half, which T1 left out (T1 ran `--filter bf16`). Carry .device with
# .device/x/rime_cand.xz, a stripped release build of rime-cli from main after 50c6b4a (T1's
# rime_cand plus comment edits): `cargo build --release -p rime-cli && strip -o /tmp/rime_cand
# target/release/rime && xz -9 -c /tmp/rime_cand > .device/x/rime_cand.xz`. About 130 s.
source docs/gpu-runs/2026-12-05-d256/lib.sh T2
step guards_f16 200 /tmp/rime_cand selftest --small --guards --require-gpu --filter /f16/
save; cat $W/times.txt $W/sha256.txt; tail -n 2 $W/guards_f16.txt
