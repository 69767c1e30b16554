#!/usr/bin/env python3
"""A/B of rime_main and a tensor-copy binary (rime_tma2 in T1, rime_tma3 in T3) from one call:
`ab.py MAIN1 TMA1 [TMA2 MAIN2]` (bench --out dirs, named PREFIX_BINARY_RUN as callT*.sh make
them; each binary's rows are the geometric mean of its runs). Per row: route, kernels, whether the
tensor copies ran (the row's `tensor_copies`, which rime_main never writes), times and tma / main;
then medians grouped by (tensor copies, route, det), and each binary's repeat / first."""
import collections
import json
import math
import sys
from statistics import median


def rows(d):
    return {r["name"]: r for r in json.load(open(f"{d}/results.json"))["results"] if r.get("median_ms")}


runs = [rows(d) for d in sys.argv[1:]]
main_runs, tma_runs = [runs[0]] + runs[3:4], runs[1:3]
groups, noise = collections.defaultdict(list), []
tma = sys.argv[2].rstrip("/").split("/")[-1].split("_")[-2]  # the binary's name in TMA1
print(f"| row | route | kernels | copies | main ms | {tma} ms | {tma} / main |")
print("|---|---|---|---|---:|---:|---:|")
for name, a in runs[0].items():
    ms = [[r[name] for r in rs if name in r] for rs in (main_runs, tma_runs)]
    if not all(ms):
        continue
    tm, tt = (math.exp(sum(math.log(x["median_ms"]) for x in m) / len(m)) for m in ms)
    copies = any(x.get("tensor_copies") for x in ms[1])
    assert not any(x.get("tensor_copies") for x in ms[0]), name
    routes = {x["route"] for x in ms[0] + ms[1]}
    kernels = {"+".join(x["kernels"]) for x in ms[0] + ms[1]}
    assert len(routes) == 1 and len(kernels) == 1, (name, routes, kernels)
    groups[(copies, a["route"], " det" in name)].append(tt / tm)
    for m in ms:
        if len(m) == 2:
            noise.append(m[1]["median_ms"] / m[0]["median_ms"])
    print(f"| {name} | {a['route']} | {kernels.pop()} | {'yes' if copies else 'no'} | {tm:.3f} | {tt:.3f} | {tt / tm:.3f} |")
print()
for (copies, route, det), v in sorted(groups.items()):
    print(f"copies={copies} {route} {'det' if det else 'non-det'}: {len(v)} rows, median {median(v):.3f} ({min(v):.3f}-{max(v):.3f})")
if noise:
    print(f"repeat / first, both binaries: {len(noise)} rows, median {median(noise):.3f} ({min(noise):.3f}-{max(noise):.3f})")
