#!/usr/bin/env bash
# Device call T1 (carry .device with rime_cand = main + tested16.patch and rime_head = main, both
# stripped release builds of rime-cli, xz): correctness of the candidate (guarded small sweep,
# every route; determinism; memcheck of the odd-length and padded-head-dim cases), then the rows
# whose main kernel adds dQ through the tested path, candidate and main in turn (cand, head,
# head, cand): the d256 suite pinned to atomic and to relay, the tested suite on the model's
# choices (padded head dims on atomic / relay) and pinned to ordered_dbias (its broadcast
# rows), and the standard suite's no-bias rows as the control (the untested path, unchanged).
source docs/gpu-runs/2026-12-05-d256/lib.sh T1
S=docs/gpu-runs/prepared-tested16/tested_suite.json
for b in cand head; do echo "$b $(strings /tmp/rime_$b | grep -c 'if (n == 16)')"; done > $W/a_ne_b.txt  # 1, 0
# bf16 only (half the sweep's ~200 s; the change is in the float dQ accumulator, the same for
# both input types): the session that ran this had 937 s of device time left.
step guards 300 /tmp/rime_cand selftest --small --guards --require-gpu --filter bf16
step det 80 /tmp/rime_cand selftest --determinism --small --require-gpu
step mem_s200 60 $CS --tool memcheck /tmp/rime_cand selftest --small --require-gpu --filter s200
step mem_pad 60 $CS --tool memcheck /tmp/rime_cand selftest --small --require-gpu --filter pad-
for b in cand head head cand; do
  turn d256_atomic 60 $b bench --suite d256 --route atomic
  turn d256_relay 60 $b bench --suite d256 --route relay
  turn tested 60 $b bench --suites $S --suite tested
  turn tested_ord 60 $b bench --suites $S --suite tested --filter bias=broadcast --route ordered_dbias
  turn std 60 $b bench --suite standard --filter "bias=none"
done
save; cat $W/times.txt $W/sha256.txt; tail -qn 2 $W/guards.txt $W/det.txt $W/mem_*.txt
