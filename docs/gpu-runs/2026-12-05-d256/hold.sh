#!/usr/bin/env bash
# The device tool carries the working tree and the named ignored paths, 64 MiB at most; the run
# records here (docs/gpu-runs, ~32 MB) plus one of FROST's carries (25-31 MB) are over it. For
# such a call: `bash docs/gpu-runs/2026-12-05-d256/hold.sh out FOLDER` moves every folder and
# file of docs/gpu-runs except FOLDER (the call's scripts) and this folder's lib.sh and hold.sh,
# and fuzz/corpus, to /tmp/gr_hold, `... hold.sh back` returns them. Never commit between the
# two: git would see the records deleted.
set -euo pipefail
cd "$(dirname "$0")/.."
hold=/tmp/gr_hold
if [ "${1:-}" = out ]; then
  keep=${2:?usage: hold.sh out FOLDER | hold.sh back}
  test -d "$keep" || { echo "no folder docs/gpu-runs/$keep" >&2; exit 2; }
  mkdir -p $hold
  for d in *; do case $d in 2026-12-05-d256|"$keep") ;; *) mv "$d" $hold/;; esac; done
  # fuzz/corpus too: its 7,418 small files cost the carry far more than their 0.6 MB.
  mv ../../fuzz/corpus $hold/.fuzz_corpus
  # Of this folder only lib.sh and hold.sh stay, unless it is the call's folder.
  if [ "$keep" != 2026-12-05-d256 ]; then
    mkdir -p $hold/.this
    for f in 2026-12-05-d256/*; do case ${f##*/} in lib.sh|hold.sh) ;; *) mv "$f" $hold/.this/;; esac; done
  fi
elif [ "${1:-}" = back ]; then
  test -d $hold || { echo "nothing held in $hold" >&2; exit 2; }
  mv $hold/.fuzz_corpus ../../fuzz/corpus
  if [ -d $hold/.this ]; then mv $hold/.this/* 2026-12-05-d256/ && rmdir $hold/.this; fi
  for d in $hold/*; do mv "$d" .; done
  rmdir $hold
else
  echo "usage: hold.sh out FOLDER | hold.sh back" >&2; exit 2
fi
ls | wc -l
