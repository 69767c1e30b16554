#!/usr/bin/env bash
# Device call H1, on a fresh machine after G2's FROST install failed (timeout cannot run a shell
# function): the binaries and the first half of FROST's compiler library into /tmp, for H2
# (`sed` of callG2.sh's fa, then its install) and G3.
source docs/gpu-runs/2026-12-05/lib.sh H1
cp .frostA1/ir.part00 /tmp/ir.part00 && ls -l /tmp/ir.part00 /tmp/rime_*
