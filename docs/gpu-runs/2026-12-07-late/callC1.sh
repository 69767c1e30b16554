#!/usr/bin/env bash
# Device call C1, 2026-12-07 (third session), run 21:11-21:15 UTC on an H100. Carry .device with rime_main = main and rime_cand = main + dqtma.patch (the dQ GEMM's dS
# and K chunks by tensor copies from one thread, a full / empty mbarrier pair a stage, no block
# barrier in the loop; on two_kernel where the main kernel takes its copies). The candidate's
# guarded two_kernel sweep first (the only route it changes), then the no-bias rows of the
# headdims, standard and d256 suites on main, cand, cand, main, then ncu of both dQ GEMMs on
# the non-causal no-bias d192 row (main's: 446.5 us in call T3).
source docs/gpu-runs/2026-12-05-d256/lib.sh C1
step sweep 150 /tmp/rime_cand selftest --small --guards --require-gpu --filter two_kernel
for b in main cand cand main; do turn hd 60 $b bench --suite headdims --filter bias=none; done
for b in main cand cand main; do turn std 60 $b bench --suite standard --filter bias=none; done
for b in cand main; do turn d256 40 $b bench --suite d256 --filter bias=none; done
for b in main cand; do
  step ncu_dq_$b 90 ncu --clock-control none -k regex:rime_dq_gemm -c 1 --set full -o $W/ncu_dq_$b -f /tmp/rime_$b bench --suite headdims --filter "d192 bias=none bf16" --warmup 0 --iters 1 --out $W/ncu_dq_${b}_bench
  step ncu_dq_${b}_details 60 ncu -i $W/ncu_dq_$b.ncu-rep --page details --csv
done
save; cat $W/times.txt $W/sha256.txt; grep -m1 -o "H[12]00[^|]*" $W/gpu.txt
tail -n 2 $W/sweep.txt | cut -c1-200; echo "copies: $(grep -c 'tensor copies' $W/sweep.txt)"
grep -h '"Duration"' $W/ncu_dq_*_details.txt | cut -d, -f5,13-15
