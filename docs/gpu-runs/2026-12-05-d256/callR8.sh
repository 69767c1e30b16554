#!/usr/bin/env bash
# Device call R8: the refitted cost model (rime_refit, built from 4b9c85c's tree) on its own
# route choices against rime_cand (2a94f7d, the model before the refit, same kernels) in one
# call: the thd suite, the sinks suite and the standard suite's causal rows; the thd suite on
# rime_refit again. Each results.json names the route and kernels that ran.
source docs/gpu-runs/2026-12-05-d256/lib.sh R8
N=/tmp/rime_refit; C=/tmp/rime_cand
step thd_refit 120 $N bench --suite thd --out $W/thd_refit
step thd_cand 120 $C bench --suite thd --out $W/thd_cand
step sinks_refit 60 $N bench --suite sinks --out $W/sinks_refit
step sinks_cand 60 $C bench --suite sinks --out $W/sinks_cand
step std_causal_refit 120 $N bench --suite standard --filter causal --out $W/std_causal_refit
step std_causal_cand 120 $C bench --suite standard --filter causal --out $W/std_causal_cand
step thd_refit_r 120 $N bench --suite thd --out $W/thd_refit_r
save; cat $W/times.txt
