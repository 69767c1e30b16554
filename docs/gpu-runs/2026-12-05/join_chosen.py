#!/usr/bin/env python3
"""Joins one call's rime run (each row on the route rime chose; results.json names the route and
kernels that ran) with the peers timed in the same call.

usage: python3 join_chosen.py CHOSEN REPEAT FROST_JSONL [PEER_JSONL ...] > table.md
  CHOSEN, REPEAT  `rime bench --out` folders (results.json) of the same suite, same binary;
                  REPEAT may be `-` (no repeat run of that binary: the column shows "-")
  FROST_JSONL     the FROST peer's lines; a deterministic row is compared with FROST's
                  deterministic time (its case says so), as the redesign's targets ask
Ratio = peer time / rime time (above 1: rime faster). Groups: bias x sink x deterministic, the rows of
each group being every shape and causal setting of the suite."""
import json, sys
from statistics import median

chosen, repeat, frost, *peers = sys.argv[1:]

def key(case):
    return json.dumps(case, sort_keys=True)

def rows(folder):
    return [r for r in json.load(open(f"{folder}/results.json"))["results"] if r.get("median_ms")]

def peer_lines(path):
    out = {}
    for line in open(path):
        j = json.loads(line)
        if "case" in j and "ms" in j:
            out[(key(j["case"]), j["backend"])] = j["ms"]
    return out

main = rows(chosen)
rep = {key(r["case"]): r["median_ms"] for r in rows(repeat)} if repeat != "-" else {}
times = peer_lines(frost)
for p in peers:
    times.update(peer_lines(p))
backends = ["FROST_SM120"] + sorted({b for (_, b) in times} - {"FROST_SM120"})

head = ["case", "route", "kernels", "rime ms", "repeat ms", "TFLOP/s"] + [f"{b} / rime" for b in backends]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * 3 + "---:|" * (len(head) - 3))
groups, drift = {}, []
for r in main:
    k = key(r["case"])
    cells = [r["name"], r["route"], " ".join(r["kernels"]), f"{r['median_ms']:.3f}",
             f"{rep[k]:.3f}" if k in rep else "-", f"{r['tflops']:.0f}"]
    if k in rep:
        drift.append(rep[k] / r["median_ms"])
    for b in backends:
        t = times.get((k, b))
        cells.append(f"{t / r['median_ms']:.2f}" if t else "-")
        if t and b == "FROST_SM120":
            c = r["case"]
            g = (f"bias={c.get('bias', 'none')}{' sink' if c.get('sink') else ''}"
                 f"{' det' if c.get('deterministic') else ''}")
            groups.setdefault(g, []).append(t / r["median_ms"])
    print("| " + " | ".join(cells) + " |")
print()
def summary(v):
    return f"{median(v):.2f} ({min(v):.2f}-{max(v):.2f}) over {len(v)} rows"
if drift:
    print(f"- repeat / first run: {summary(drift)}")
for g, v in sorted(groups.items()):
    print(f"- FROST / rime, {g}: {summary(v)}")
for b in backends[1:]:
    v = [times[(key(r['case']), b)] / r["median_ms"] for r in main if (key(r["case"]), b) in times]
    if v:
        print(f"- {b} / rime: {summary(v)}")
