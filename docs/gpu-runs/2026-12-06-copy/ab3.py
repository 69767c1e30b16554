#!/usr/bin/env python3
"""A/B from one call, order base, B, base_r: per row B / sqrt(base * base_r), grouped by route and
determinism; base_r / base is the noise. usage: ab3.py BASE B BASE_R (rime bench --out folders;
BASE_R may be `-`: no repeat, B / base, and no noise line)"""
import json, sys, math, collections
from statistics import median
def rows(f): return {r["name"]: r for r in json.load(open(f"{f}/results.json"))["results"] if r.get("median_ms")}
A, B = rows(sys.argv[1]), rows(sys.argv[2])
Ar = rows(sys.argv[3]) if sys.argv[3] != "-" else {}
g = collections.defaultdict(list); noise = []
for n, a in A.items():
    if n not in B: continue
    ta = math.sqrt(a["median_ms"] * Ar[n]["median_ms"]) if n in Ar else a["median_ms"]
    if n in Ar: noise.append(Ar[n]["median_ms"] / a["median_ms"])
    tb = B[n]["median_ms"]
    assert a["route"] == B[n]["route"], n
    g[(a["route"], "det" if " det" in n else "non-det")].append(tb / ta)
    print(f"| {n} | {a['route']} | {B[n]['kernels']} | {ta:.3f} | {tb:.3f} | {tb/ta:.3f} |")
for k, v in sorted(g.items()): print(k, len(v), f"{median(v):.3f} ({min(v):.3f}-{max(v):.3f})")
if noise: print("base_r / base", len(noise), f"{median(noise):.3f} ({min(noise):.3f}-{max(noise):.3f})")
