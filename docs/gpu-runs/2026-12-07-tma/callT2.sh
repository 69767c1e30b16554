#!/usr/bin/env bash
# Device call T2, run 2026-12-07 13:02-13:04 UTC right after T1 on the same H100 (carry .device;
# records held out): compute-sanitizer on rime_tma2's tensor-copy cases (every envelope's plain cases, both io types and every route,
# and the padded head dims whose last panel is half outside the tensor), then the determinism
# table (its no-bias rows run the copies on the deterministic routes), then the full sweep's
# plain cases with guards at full size.
source docs/gpu-runs/2026-12-05-d256/lib.sh T2
step mem_plain 90 $CS --tool memcheck --error-exitcode 9 /tmp/rime_tma2 selftest --small --require-gpu --filter=-plain/
step mem_pad 60 $CS --tool memcheck --error-exitcode 9 /tmp/rime_tma2 selftest --small --require-gpu --filter pad-
step race_plain 150 $CS --tool racecheck --racecheck-report all --error-exitcode 9 /tmp/rime_tma2 selftest --small --require-gpu --filter=-plain/bf16
step sync_plain 90 $CS --tool synccheck --error-exitcode 9 /tmp/rime_tma2 selftest --small --require-gpu --filter=-plain/bf16
step det 150 /tmp/rime_tma2 selftest --determinism --require-gpu --repeats 20
step full_plain 120 /tmp/rime_tma2 selftest --guards --require-gpu --filter=-plain/
save; cat $W/times.txt
for f in $W/mem_*.txt $W/race_*.txt $W/sync_*.txt $W/det.txt $W/full_plain.txt; do echo "== $f"; tail -n 3 $f; done
grep -c "tensor copies" $W/mem_plain.txt $W/full_plain.txt
