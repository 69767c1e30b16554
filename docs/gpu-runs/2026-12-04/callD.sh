#!/usr/bin/env bash
# Device call D (2026-12-04): the final tree (rime_final: the pipelined dQ GEMM and the refitted
# cost model): the whole small sweep with guards (every route), memcheck and racecheck on the
# plain two_kernel cases (the dQ GEMM's cp.async ring), then the d256 and standard suites on the
# binary's own route choices, to check against call C's pinned times that each row runs the
# route the model names at the time measured there.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk
W=/tmp/wd; mkdir -p $W
save() { tar -czf $OUT/callD.tgz -C $W . 2>/dev/null; }
step() { local n=$1; shift; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt; timeout 240 "$@" > $W/$n.txt 2>&1; echo "$(date -u +%FT%TZ) rc=$? end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1
F=.device/rime_final
step small $F selftest --small --guards --require-gpu
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step memcheck $CS --tool memcheck $F selftest --small --filter plain/bf16/bhsd/two_kernel --require-gpu
step racecheck $CS --tool racecheck --racecheck-report all $F selftest --small --filter plain/bf16/bhsd/two_kernel --require-gpu
step d256 $F bench --suite d256 --out $W/d256
step standard $F bench --suite standard --out $W/standard
save
cat $W/times.txt; tail -n 2 $W/small.txt $W/memcheck.txt $W/racecheck.txt
