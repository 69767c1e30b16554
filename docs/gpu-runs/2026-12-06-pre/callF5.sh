#!/usr/bin/env bash
# Device call F5, right after F4 on the same machine: racecheck of rime_pre on the odd-length
# cases; the standard suite's per-batch rows once on each binary. (Typed at the prompt as one
# line; this is that line.)
source docs/gpu-runs/2026-12-05-d256/lib.sh F5; CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer; step race 120 $CS --tool racecheck --racecheck-report all /tmp/rime_pre selftest --small --require-gpu --filter s200; for b in pre main; do step batch_$b 60 /tmp/rime_$b bench --suite standard --filter "bias=batch" --out $W/batch_$b; done; save; cat $W/times.txt; tail -n 3 $W/race.txt
