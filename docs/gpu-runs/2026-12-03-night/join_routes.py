#!/usr/bin/env python3
"""Joins call L3's route-pinned rime runs with the peers of the same call, on the route the cost
model of this tree picks for each row (asked of `rime heuristics --target h200`).

usage: python3 join_routes.py RIME SUITE CALL_DIR FROST_JSONL [PEER_JSONL ...] > table.md
  RIME      a rime binary of this tree (its cost model chooses the route of each row)
  SUITE     d256 or sinks; CALL_DIR holds SUITE_two_kernel/ and SUITE_atomic/ (results.json),
            and SUITE_two_kernel_r/ or SUITE_chosen/ as the repeat where there is one
Ratio = peer time / rime time (above 1: rime faster). FROST's deterministic time is taken for a
deterministic row, its non-deterministic one otherwise."""
import json, os, subprocess, sys, tempfile
from statistics import median

rime, suite, call, frost, *peers = sys.argv[1:]

def rows(path):
    try:
        return {json.dumps(r["case"], sort_keys=True): r for r in json.load(open(path))["results"]
                if r.get("median_ms")}
    except FileNotFoundError:
        return {}

pinned = {r: rows(f"{call}/{suite}_{r}/results.json") for r in ("two_kernel", "atomic")}
repeat = rows(f"{call}/{suite}_chosen/results.json")
repeat_tk = rows(f"{call}/{suite}_two_kernel_r/results.json")

def peer_lines(path):
    out = {}
    for line in open(path):
        j = json.loads(line)
        if "case" in j and "ms" in j:
            out[(json.dumps(j["case"], sort_keys=True), j["backend"])] = j["ms"]
    return out

frost_t = peer_lines(frost)
peer_t = {}
for p in peers:
    peer_t.update(peer_lines(p))
backends = sorted({b for (_, b) in peer_t})

with tempfile.TemporaryDirectory() as d:
    subprocess.run([rime, "bench", "--suite", suite, "--graphs", "--dry-run", "--out", d],
                   check=True, capture_output=True)
    cases = json.load(open(f"{d}/cases.json"))
    chosen = []
    for i, c in enumerate(cases):
        j = json.loads(subprocess.run([rime, "heuristics", f"{d}/graphs/{i:03d}.json", "--target",
                                       "h200", "--json"], check=True, capture_output=True,
                                      text=True).stdout)
        first = next(x["config"].split("/")[-1] for x in j["candidates"]
                     if x["config"].startswith("sm120"))
        chosen.append(first)

print("| case | route | kernels | rime ms | repeat ms | TFLOP/s | FROST ms | FROST / rime |"
      + "".join(f" {b} / rime |" for b in backends))
print("|---|---|---|---:|---:|---:|---:|---:|" + "---:|" * len(backends))
ratios = {"FROST": []}
for c, route in zip(cases, chosen):
    k = json.dumps(c, sort_keys=True)
    r = pinned.get(route, {}).get(k)
    if r is None and repeat.get(k, {}).get("route") == route:
        # Not pinned in the call, but the run on the binary's own choices ran this route.
        r, repeat[k] = repeat[k], None
    if r is None:
        print(f"| {c} | {route} | not timed |")
        continue
    ms = r["median_ms"]
    rep = repeat_tk.get(k) if route == "two_kernel" else None
    if rep is None and (repeat.get(k) or {}).get("route") == route:
        rep = repeat[k]
    rep_ms = f"{rep['median_ms']:.3f}" if rep else "-"
    f = frost_t.get((k, "FROST_SM120"))
    fr = f"{f / ms:.2f}" if f else "-"
    if f:
        ratios["FROST"].append(f / ms)
    cells = []
    for b in backends:
        p = peer_t.get((k, b))
        cells.append(f"{p / ms:.2f}" if p else "-")
        if p:
            ratios.setdefault(b, []).append(p / ms)
    print(f"| {r['name']} | {route} | {' '.join(r['kernels'])} | {ms:.3f} | {rep_ms} | "
          f"{r['tflops']:.0f} | {f'{f:.3f}' if f else '-'} | {fr} |" + "".join(f" {x} |" for x in cells))
print()
for b, v in ratios.items():
    if v:
        print(f"- {b} / rime: median {median(v):.2f} ({min(v):.2f}-{max(v):.2f}) over {len(v)} rows")
