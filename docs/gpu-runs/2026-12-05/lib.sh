# Shared by this folder's device calls: `source docs/gpu-runs/2026-12-05/lib.sh NAME` sets W (the
# call's work folder, tarred to $OUT/NAME.tgz after every step), unpacks the carried binaries
# into /tmp once per machine and defines step: `step LABEL SECONDS CMD...` runs CMD with its
# output in $W/LABEL.txt (SECONDS bounds CMD unless it is a shell function, which timeout cannot run) and its start, end and exit status in $W/times.txt.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
CALL=$1; W=/tmp/w_$CALL; mkdir -p $W
save() { tar -czf $OUT/$CALL.tgz -C $W . 2>/dev/null; }
step() { local n=$1 t=$2; shift 2; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt
  if declare -F "$1" >/dev/null; then "$@"; else timeout $t "$@"; fi > $W/$n.txt 2>&1; local rc=$?  # before any $(...), which would reset $?
  echo "$(date -u +%FT%TZ) rc=$rc end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1
for b in base final noil; do
  test -x /tmp/rime_$b || { test -f .device/x/rime_$b.xz && xz -dc .device/x/rime_$b.xz > /tmp/rime_$b && chmod +x /tmp/rime_$b; }
done
sha256sum /tmp/rime_* > $W/sha256.txt 2>&1
B=/tmp/rime_base; F=/tmp/rime_final; N=/tmp/rime_noil
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
