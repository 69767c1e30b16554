# Shared by this folder's device calls: `source docs/gpu-runs/2026-12-05-d256/lib.sh NAME` sets W
# (the call's work folder, tarred to $OUT/NAME.tgz after every step), unpacks every carried
# binary .device/x/rime_*.xz into /tmp once per machine (sha256 of each printed to sha256.txt)
# and defines `step LABEL SECONDS CMD...`: CMD's output goes to $W/LABEL.txt, its start, end and
# exit status to $W/times.txt (SECONDS bounds CMD unless it is a shell function, which timeout
# cannot run).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} RIME_KERNEL_CACHE=/tmp/rk PYTHONUNBUFFERED=1
CALL=$1; W=/tmp/w_$CALL; mkdir -p $W
save() { tar -czf $OUT/$CALL.tgz -C $W . 2>/dev/null; }
step() { local n=$1 t=$2; shift 2; echo "$(date -u +%FT%TZ) start $n" >> $W/times.txt
  if declare -F "$1" >/dev/null; then "$@"; else timeout $t "$@"; fi > $W/$n.txt 2>&1; local rc=$?  # before any $(...), which would reset $?
  echo "$(date -u +%FT%TZ) rc=$rc end $n" >> $W/times.txt; save; }
nvidia-smi > $W/gpu.txt 2>&1
for x in .device/x/rime_*.xz; do
  test -f $x || continue; b=/tmp/$(basename $x .xz); test -x $b || { xz -dc $x > $b && chmod +x $b; }
done
sha256sum /tmp/rime_* > $W/sha256.txt 2>&1
