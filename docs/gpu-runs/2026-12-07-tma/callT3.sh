#!/usr/bin/env bash
# Device call T3, prepared in the first session of 2026-12-07 (whose device time ran out) and run
# in the second, 15:38-15:41 UTC, on an H100. Carry .device with
# rime_main = main and rime_tma3 = main + tma3.patch (one tensor copy a tile: a rank-5 map whose
# box is the tile's 16-column panels, issued by one thread, on the split and two-dO-buffer layouts
# without a bias, head dims of whole panels); records held out (hold.sh out 2026-12-07-tma).
# T1 measured tma2.patch (a copy a panel, one lane of warp 0 each) 1.03-1.24x slower than main;
# this times the one-copy form: its tensor-copy sweep cases with guards first, then the no-bias
# rows of the headdims, standard and d256 suites in turn on main and tma3, then sanitizers.
source docs/gpu-runs/2026-12-05-d256/lib.sh T3
step sweep_plain 60 /tmp/rime_tma3 selftest --small --guards --require-gpu --filter=-plain/
step sweep_d192 60 /tmp/rime_tma3 selftest --small --guards --require-gpu --filter d192v192-
step sweep_sink 60 /tmp/rime_tma3 selftest --small --guards --require-gpu --filter sink-
step sweep_pad 30 /tmp/rime_tma3 selftest --small --guards --require-gpu --filter pad-
for b in main tma3 tma3 main; do turn hd 60 $b bench --suite headdims --filter bias=none; done
for b in main tma3 tma3 main; do turn std 60 $b bench --suite standard --filter bias=none; done
for b in tma3 main; do turn d256 40 $b bench --suite d256 --filter bias=none; done
# Added 2026-12-07 (second session) before it ran: where main's dQ GEMM spends its 446 us on the
# non-causal no-bias d192 row (two_kernel), one launch with ncu's full set.
step ncu_dq 120 ncu --clock-control none -k regex:rime_dq_gemm -c 1 --set full -o $W/ncu_dq -f /tmp/rime_main bench --suite headdims --filter "d192 bias=none bf16" --warmup 0 --iters 1 --out $W/ncu_dq_bench
step ncu_dq_details 60 ncu -i $W/ncu_dq.ncu-rep --page details --csv
step mem_plain 60 $CS --tool memcheck --error-exitcode 9 /tmp/rime_tma3 selftest --small --require-gpu --filter=-plain/
step race_plain 90 $CS --tool racecheck --racecheck-report all --error-exitcode 9 /tmp/rime_tma3 selftest --small --require-gpu --filter=-plain/bf16
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt
for f in $W/sweep_*.txt $W/mem_*.txt $W/race_*.txt; do echo "== $f"; tail -n 1 $f | cut -c1-200; grep -c "tensor copies" $f; done
