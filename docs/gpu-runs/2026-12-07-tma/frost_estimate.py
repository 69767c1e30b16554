#!/usr/bin/env python3
"""Cross-call estimate of FROST / rime for the tensor-copy kernels (no FROST ran with them):
FROST's time from an earlier one-call join (Y3: headdims, V4: standard, V3: d256; the *_joined.md
tables, columns rime ms and FROST ms) over rime's time there scaled by T3's tma3 / main of the
same row (geometric means, T3/*_{main,tma3}_R/results.json). Rows where T3 ran the copies on two_kernel only (the committed rule, 7d6cf6c: atomic keeps
cp.async, so its rows are as they were).
usage (from this folder): python3 frost_estimate.py"""
import json
import math

JOINS = {"hd": "../2026-12-07-eve/Y3/hd_joined.md", "std": "../2026-12-07-day/V4/std_joined.md",
         "d256": "../2026-12-07-day/V3/d256_joined.md"}
RUNS = {"hd": (["hd_main_1", "hd_main_2"], ["hd_tma3_1", "hd_tma3_2"]),
        "std": (["std_main_1", "std_main_2"], ["std_tma3_1", "std_tma3_2"]),
        "d256": (["d256_main_1"], ["d256_tma3_1"])}


def results(d):
    return {r["name"]: r for r in json.load(open(f"T3/{d}/results.json"))["results"] if r.get("median_ms")}


def gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


print("| row | rime then ms | FROST then ms | FROST / rime then | T3 tma3 / main | FROST / rime estimate |")
print("|---|---:|---:|---:|---:|---:|")
for suite, path in JOINS.items():
    mains, tmas = ([results(d) for d in ds] for ds in RUNS[suite])
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 6 or "bias=none" not in cells[0]:
            continue
        name = cells[0]
        if not all(name in r for r in mains + tmas) or not tmas[0][name].get("tensor_copies"):
            continue
        if tmas[0][name]["route"] != "two_kernel" or cells[5] == "-":
            continue
        rime, frost = float(cells[3]), float(cells[5])
        ratio = gmean([r[name]["median_ms"] for r in tmas]) / gmean([r[name]["median_ms"] for r in mains])
        print(f"| {name} | {rime:.3f} | {frost:.3f} | {frost / rime:.2f} | {ratio:.3f} | {frost / (rime * ratio):.2f} |")
