#!/usr/bin/env bash
# Device call H2, right after H1: FROST's part A, with callG2.sh's own fa.
source docs/gpu-runs/2026-12-05/lib.sh H2
eval "$(sed -n '/^fa()/,/install_a.sh; }/p' docs/gpu-runs/2026-12-05/callG2.sh)"
step frost_install_a 120 fa; cat $W/times.txt; tail -n 3 $W/frost_install_a.txt
