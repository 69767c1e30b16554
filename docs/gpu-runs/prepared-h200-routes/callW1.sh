#!/usr/bin/env bash
# Device call W1, prepared 2026-12-07 and not run (no device time left): checks on a live H200
# the route choices that DS_PASS_MAX_GBS (crates/analyzer/src/cost.rs) changed for the `h200`
# profile, which the CLI tests derive from H100 timings (call K1) and from U6's padded head dims
# only. Meaningful on an H200 (the `auto` target takes the `h200` profile there; on an H100 it
# re-checks the `h100` profile, which the change does not touch): gpu.txt says which ran.
# Carry .device with .device/x/rime_main.xz, a stripped release build of main at or after
# 702555f (DS_PASS_MAX_GBS since 9a985cf, the thd-pad sweep cases since 702555f): `cargo build
# --release -p rime-cli && strip -o /tmp/rime_main target/release/rime && xz -9 -c
# /tmp/rime_main > .device/x/rime_main.xz`; records held out (hold.sh out
# prepared-h200-routes). About 5 minutes: the standard suite on the model's own choices, then
# pinned to atomic and to two_kernel (relay is only ever chosen for deterministic rows, which
# this change does not move), each twice in the order own, atomic, two_kernel, two_kernel,
# atomic, own (logs std_main_R, std_atomic_main_R, std_2k_main_R). Then point the CLI's
# route-choice check (`check_first_routes` in crates/cli/src/cmd/bench.rs, `h200` profile) at
# the four pinned results.json files, as the U6 test does, and see for the 16 rows the change
# moved (the standard suite's non-deterministic d128 rows and b8 s1024 d64 per-batch causal)
# whether atomic is the faster route there too.
source docs/gpu-runs/2026-12-05-d256/lib.sh W1
# First the 12 ragged padded-head-dim sweep cases added after U1 (thd-pad-*), never run yet.
step thd_pad 120 /tmp/rime_main selftest --small --guards --require-gpu --filter thd-pad
turn std 90 main bench --suite standard
turn std_atomic 90 main bench --suite standard --route atomic
turn std_2k 90 main bench --suite standard --route two_kernel
turn std_2k 90 main bench --suite standard --route two_kernel
turn std_atomic 90 main bench --suite standard --route atomic
turn std 90 main bench --suite standard
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt
