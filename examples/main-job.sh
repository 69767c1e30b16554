#!/usr/bin/env bash
# The main job: one example graph through validate, check, heuristics and run.
# Runs on the CPU reference engine when no GPU is present (target `auto` falls back to `cpu`).
set -euo pipefail
cd "$(dirname "$0")/.."
graph="${1:-examples/backward_gqa_causal.json}"
target="${RIME_TARGET:-auto}"
cargo build --release --quiet -p rime-cli
rime=target/release/rime
out="${TMPDIR:-/tmp}/rime-main-job"
mkdir -p "$out"
set -x
"$rime" validate "$graph"
"$rime" check "$graph" --target "$target"
"$rime" heuristics "$graph" --target "$target"
"$rime" run "$graph" --target "$target" --seed 7 --outputs "$out/outputs.safetensors"
