#!/usr/bin/env python3
"""One suite's rows from one call: the candidate on its own route choices, the candidate pinned
to one route, and main on its own choices (each a `rime bench --out` folder).

usage: python3 routes_ab.py CAND PINNED HEAD > table.md
Columns: the candidate's chosen route and time, the pinned route's time over it (below 1: the
pinned route was faster, so the cost model's choice lost), main's time over the candidate's."""
import json, sys
from statistics import median

def rows(folder):
    return {r["name"]: r for r in json.load(open(f"{folder}/results.json"))["results"]
            if r.get("median_ms")}

cand, pinned, head = (rows(f) for f in sys.argv[1:4])
print("| case | chosen route | ms | pinned route | pinned / chosen | main route | main / cand |")
print("|---|---|---:|---|---:|---|---:|")
pr, hr = [], []
for name, c in cand.items():
    p, h = pinned.get(name), head.get(name)
    pv = p["median_ms"] / c["median_ms"] if p else None
    hv = h["median_ms"] / c["median_ms"] if h else None
    if pv: pr.append(pv)
    if hv: hr.append(hv)
    print(f"| {name} | {c['route']} | {c['median_ms']:.3f} | {p['route'] if p else '-'} | "
          f"{f'{pv:.3f}' if pv else '-'} | {h['route'] if h else '-'} | {f'{hv:.3f}' if hv else '-'} |")
if pr:
    print(f"\n- pinned / chosen: median {median(pr):.3f} ({min(pr):.3f}-{max(pr):.3f}) over {len(pr)} rows; "
          f"pinned faster on {sum(v < 1 for v in pr)}")
if hr:
    print(f"- main / candidate: median {median(hr):.3f} ({min(hr):.3f}-{max(hr):.3f}) over {len(hr)} rows")
