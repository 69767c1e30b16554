# Shared by this folder's device calls: `source docs/gpu-runs/2026-12-05-d256/lib.sh NAME` sets W
# (the call's work folder, tarred to $OUT/NAME.tgz after every step and every 20 s within one),
# unpacks every carried binary .device/x/rime_*.xz into /tmp once per machine (sha256 of each
# printed to sha256.txt) and defines `step LABEL SECONDS CMD...` (and `turn`, below): CMD's
# output goes to $W/LABEL.txt, its start, end and exit status to $W/times.txt (SECONDS bounds
# CMD unless it is a shell function, which timeout cannot run).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
CALL=$1; W=/tmp/w_$CALL; mkdir -p $W
# save writes a whole archive and renames it, so a call killed mid-save still returns the last one.
save() { tar -czf $OUT/$CALL.part.tgz -C $W . 2>/dev/null && mv -f $OUT/$CALL.part.tgz $OUT/$CALL.tgz; }
# A step also saves every 20 s while it runs: a call killed at its limit keeps the running
# step's output so far (call M3 returned nothing when its first step outlived the limit).
step() { local n=$1 t=$2; shift 2; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt
  ( while sleep 20; do save; done ) & local saver=$!
  if declare -F "$1" >/dev/null; then "$@"; else timeout $t "$@"; fi > $W/$n.txt 2>&1; local rc=$?  # before any $(...), which would reset $?
  kill $saver 2>/dev/null; wait $saver 2>/dev/null
  echo "$(date -u +%FT%TZ) rc=$rc end $n" >> $W/times.txt; save; }
# turn PREFIX SECONDS BIN ARGS...: step PREFIX_BIN_R running /tmp/rime_BIN ARGS --out $W/PREFIX_BIN_R,
# R one more than the PREFIX_BIN_*.txt logs already in $W (for binaries timed in turn).
turn() { local p=$1 t=$2 b=$3; shift 3; local r=$(( $(ls $W | grep -c "^${p}_${b}_[0-9]*\.txt$") + 1 ))
  step ${p}_${b}_$r $t /tmp/rime_$b "$@" --out $W/${p}_${b}_$r; }
nvidia-smi > $W/gpu.txt 2>&1
# compute-sanitizer (CS), from PATH or CUDA's own bin.
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
for x in .device/x/rime_*.xz; do
  test -f $x || continue; b=/tmp/$(basename $x .xz); test -x $b || { xz -dc $x > $b && chmod +x $b; }
done
sha256sum /tmp/rime_* > $W/sha256.txt 2>&1
# Steps shared by R3, R4 and R5 (they read C, the candidate, and H, main, from the caller).
# The full sweep's long cases with guards, each filter bounded by $1 seconds.
long_cases() { local t=$1; for f in len1 window-long sq100-skv300 sq300-skv100; do
  timeout $t $C selftest --guards --require-gpu --filter $f || echo "FAILED or timed out: $f rc=$?"; done; }
# The standard suite's causal rows and the thd suite, candidate and main on their own choices
# and the candidate pinned to two_kernel; each standard step bounded by $1 s, each thd one by $2.
causal_thd_rows() { local t=$1 u=$2
  step std_causal_cand $t $C bench --suite standard --filter causal --out $W/std_causal_cand
  step std_causal_head $t $H bench --suite standard --filter causal --out $W/std_causal_head
  step std_causal_cand_2k $t $C bench --suite standard --filter causal --route two_kernel --out $W/std_causal_cand_2k
  step thd_cand $u $C bench --suite thd --out $W/thd_cand
  step thd_head $u $H bench --suite thd --out $W/thd_head
  step thd_cand_2k $u $C bench --suite thd --route two_kernel --out $W/thd_cand_2k; }
# FROST (the seed's SM120 kernels through the cuDNN frontend 1.32 wheel) comes in three carries
# that must land on one warm machine in three back-to-back calls: .frostA1 (first half of the
# DSL's compiler library), .frostA2 (the rest of part A), .frostB (part B) with .dev3 (the peer
# script with the sink). frost_keep in the first call, frost_a in the second, frost_b in the
# third, then frost_peer CASES_JSON OUT_JSONL SECONDS for each suite.
FROST_PATH="PYTHONPATH=/tmp/frost-site:/tmp/frost-site/nvidia_cutlass_dsl/dsl_packages"
frost_keep() { cp .frostA1/ir.part00 /tmp/ir.part00 && ls -l /tmp/ir.part00; }
frost_a() { test -f /tmp/ir.part00 || { echo "the first call's half is not on this machine"; return 3; }
  mkdir -p /tmp/fa && cp .frostA2/* /tmp/fa/ && cat /tmp/ir.part00 .frostA2/ir.part01 > /tmp/fa/ir.so.xz \
  && echo "$(cat .frostA2/ir.sha256)  /tmp/fa/ir.so.xz" | sha256sum -c && bash /tmp/fa/install_a.sh; }
frost_b() { bash .frostB/install_b.sh; }
frost_peer() { env $FROST_PATH timeout $3 python3 .dev3/frost_peer_sink.py $1 > $2; }
# Two calls instead of three (2026-12-07, call L4 on): the first carries .frostA1 and .frostB and
# keeps both (frost_keep_ab), the second carries .frostA2 and .dev3 and installs both halves
# (frost_ab), then times.
frost_keep_ab() { frost_keep && mkdir -p /tmp/fb && cp .frostB/* /tmp/fb/ && ls -l /tmp/fb; }
frost_ab() { frost_a && bash /tmp/fb/install_b.sh; }
