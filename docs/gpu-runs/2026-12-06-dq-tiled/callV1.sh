#!/usr/bin/env bash
# Device call V1 (carry .device with rime_final: the committed tree, whose non-whole reduction
# path differs from rime_tile's, see README): the guarded small sweep's atomic, relay and
# ordered_dbias cases (the routes that add into the dQ accumulator), memcheck of its odd-length
# and padded-head-dim cases on every route, and the standard no-bias rows and the sinks suite
# on the refitted cost model's own route choices (d128 now atomic).
source docs/gpu-runs/2026-12-05-d256/lib.sh V1
C=/tmp/rime_final
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
step std 40 $C bench --suite standard --filter "bias=none" --out $W/std
step sinks 30 $C bench --suite sinks --out $W/sinks
for r in atomic relay ordered_dbias; do step guards_$r 150 $C selftest --small --guards --require-gpu --filter /$r; done
step mem_s200 60 $CS --tool memcheck $C selftest --small --require-gpu --filter s200
step mem_pad 60 $CS --tool memcheck $C selftest --small --require-gpu --filter pad-d
step d256_atomic 40 $C bench --suite d256 --route atomic --out $W/d256_atomic
save; cat $W/times.txt; for f in guards_atomic guards_relay guards_ordered_dbias; do tail -n 1 $W/$f.txt; done; tail -n 2 $W/mem_s200.txt $W/mem_pad.txt
