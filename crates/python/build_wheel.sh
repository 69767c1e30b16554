#!/usr/bin/env bash
# Builds what crates/python/gpu_check.sh installs on a GPU machine without Rust or network:
# the rime wheel (abi3, manylinux_2_34 x86_64, release) and, for a Python 3.12 there that may
# lack them, the pytest and numpy wheels, all in .wheel/ (git-ignored; about 18 MB).
#
#   bash crates/python/build_wheel.sh        (needs maturin: pip install maturin)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
py="${PYTHON:-python3}"
out="$root/.wheel"
rm -rf "$out"
mkdir -p "$out"
maturin="${MATURIN:-maturin}"
"$maturin" build --release --compatibility manylinux_2_34 --out "$out" -m "$root/crates/python/Cargo.toml"
"$py" -m pip download --quiet --disable-pip-version-check --dest "$out" --only-binary=:all: \
  --python-version 3.12 --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 \
  --platform any pytest numpy
ls -l "$out"
du -sh "$out"
