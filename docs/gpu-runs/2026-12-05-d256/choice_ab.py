#!/usr/bin/env python3
"""Two binaries' own route choices on one suite in one call (each a `rime bench --out` folder):
every row with the route and time of each, then the time ratio new / old over the rows whose
route changed and over those whose route did not (the second is the call's noise: same kernels).

usage: python3 choice_ab.py OLD NEW > table.md"""
import json, sys
from statistics import median

def rows(folder):
    return {r["name"]: r for r in json.load(open(f"{folder}/results.json"))["results"]
            if r.get("median_ms")}

old, new = (rows(f) for f in sys.argv[1:3])
print("| case | old route | new route | old ms | new ms | new / old |")
print("|---|---|---|---:|---:|---:|")
changed, same = [], []
for name, o in old.items():
    n = new.get(name)
    if n is None:
        continue
    r = n["median_ms"] / o["median_ms"]
    (changed if n["route"] != o["route"] else same).append(r)
    print(f"| {name} | {o['route']} | {n['route']} | {o['median_ms']:.3f} | {n['median_ms']:.3f} | {r:.3f} |")
print()
for label, v in (("route changed", changed), ("route kept", same)):
    if v:
        print(f"- {label}: {len(v)} rows, new / old median {median(v):.3f} ({min(v):.3f}-{max(v):.3f})")
