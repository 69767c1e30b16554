#!/usr/bin/env python3
"""A/B of two binaries each run twice in one call (order A, B, A_r, B_r): per row geometric means,
grouped by route (uses B/A, and A_r/A as the noise)."""
import json,sys,math,collections
from statistics import median
def rows(f): return {r["name"]:r for r in json.load(open(f"{f}/results.json"))["results"] if r.get("median_ms")}
A,B,Ar,Br=(rows(f) for f in sys.argv[1:5])
g=collections.defaultdict(list); noise=[]
for n,a in A.items():
    if n not in B or n not in Ar or n not in Br: continue
    ta=math.sqrt(a["median_ms"]*Ar[n]["median_ms"]); tb=math.sqrt(B[n]["median_ms"]*Br[n]["median_ms"])
    key=(a["route"], "det" if " det" in n else "non-det")
    g[key].append(tb/ta); noise.append(Ar[n]["median_ms"]/a["median_ms"]); noise.append(Br[n]["median_ms"]/B[n]["median_ms"])
    print(f"| {n} | {a['route']} | {ta:.3f} | {tb:.3f} | {tb/ta:.3f} |")
for k,v in sorted(g.items()): print(k,len(v),f"{median(v):.3f} ({min(v):.3f}-{max(v):.3f})")
print("repeat/first (both)",len(noise),f"{median(noise):.3f} ({min(noise):.3f}-{max(noise):.3f})")
