#!/usr/bin/env bash
# Device call G1: everything that checks rime_final (the committed kernels) and needs no peer, so
# that it stands alone if no second call is lent: the whole small sweep with guards, memcheck and
# racecheck, the determinism table (20 runs), the d256 and sinks suites on rime's own route
# choices. Parks the first half of FROST's compiler library in /tmp for G2.
source docs/gpu-runs/2026-12-05/lib.sh G1
cp .frostA1/ir.part00 /tmp/ir.part00
step small 300 $F selftest --small --guards --require-gpu
step memcheck 150 $CS --tool memcheck $F selftest --small --filter plain/bf16/bhsd --require-gpu
step racecheck 150 $CS --tool racecheck --racecheck-report all $F selftest --small --filter d256v256 --require-gpu
step det 120 $F selftest --determinism --small --require-gpu
step d256_chosen 120 $F bench --suite d256 --out $W/d256_chosen
step sinks_chosen 60 $F bench --suite sinks --out $W/sinks_chosen
save; cat $W/times.txt; tail -n 1 $W/small.txt; grep -c FAIL $W/small.txt; tail -n 2 $W/memcheck.txt $W/racecheck.txt $W/det.txt
