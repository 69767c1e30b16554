#!/usr/bin/env python3
"""A/B of two binaries' bench runs in one call: for each row, the faster of each binary's
medians (runs SUITE_B_N/ in CALL_DIR), the route and kernels each ran (they must agree, else
the row is flagged), B / A, and the geometric means by route and overall.
usage: ab.py CALL_DIR SUITE A B"""
import glob, json, math, sys

d, suite, a, b = sys.argv[1:5]


def runs(x):
    return [json.load(open(r))["results"] for r in sorted(glob.glob(f"{d}/{suite}_{x}_*/results.json"))]


ra, rb = runs(a), runs(b)
print(f"== {d} {suite}: {b}/{a}, the faster median of {len(ra)} and {len(rb)} runs (ms)")
logs = {}
for i, row in enumerate(ra[0]):
    ta = [r[i]["median_ms"] for r in ra if r[i].get("median_ms")]
    tb = [r[i]["median_ms"] for r in rb if r[i].get("median_ms")]
    ka = {(r[i].get("route"), tuple(r[i].get("kernels", []))) for r in ra}
    kb = {(r[i].get("route"), tuple(r[i].get("kernels", []))) for r in rb}
    assert all(r[i]["name"] == row["name"] for r in ra + rb), row["name"]
    if not ta or not tb:
        print(f"{row['name']:<58} not timed ({row.get('route')})")
        continue
    x, y = min(ta), min(tb)
    flag = "" if ka == kb and len(ka) == 1 else f"  ROUTES DIFFER {ka} {kb}"
    route = row["route"]
    print(f"{row['name']:<58} {route:<13} {'+'.join(row['kernels']):<48} {x:7.3f} {y:7.3f} {y / x:.3f}{flag}")
    logs.setdefault(route, []).append(math.log(y / x))
alll = [v for l in logs.values() for v in l]
for k, l in sorted(logs.items()):
    print(f"  geo {k}: {math.exp(sum(l) / len(l)):.3f} ({len(l)}) range {math.exp(min(l)):.3f}-{math.exp(max(l)):.3f}")
print(f"  geo all: {math.exp(sum(alll) / len(alll)):.3f} ({len(alll)})")
