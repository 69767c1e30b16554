"""A/B of two `rime bench` runs of one call: python3 ab.py A.json [A2.json] B.json TITLE > ab.md.

Ratio = B time / A time (above 1: A is faster); with A2 (a repeat of A in the same call) A's
time is the mean of the two. The kernels columns are what each binary's plan ran."""
import json, statistics, sys

def load(p):
    return {json.dumps(x["case"], sort_keys=True): x for x in json.load(open(p))["results"]
            if x.get("median_ms")}

args = sys.argv[1:]
title = args.pop()
a, b = load(args[0]), load(args[-1])
a2 = load(args[1]) if len(args) == 3 else {}
print(f"# {title}\n")
print("| case | route | A kernels | B kernels | A ms | B ms | B / A |\n|---|---|---|---|---:|---:|---:|")
ratios = []
for k, x in a.items():
    if k not in b:
        continue
    t = (x["median_ms"] + a2[k]["median_ms"]) / 2 if k in a2 else x["median_ms"]
    r = b[k]["median_ms"] / t
    ratios.append(r)
    ka, kb = " ".join(x["kernels"]), " ".join(b[k]["kernels"])
    print(f"| {x['name']} | {x['route']} | {ka} | {kb} | {t:.3f} | {b[k]['median_ms']:.3f} | {r:.3f} |")
print(f"\nMedian {statistics.median(ratios):.3f} over {len(ratios)} rows, "
      f"range {min(ratios):.3f}-{max(ratios):.3f}.")
