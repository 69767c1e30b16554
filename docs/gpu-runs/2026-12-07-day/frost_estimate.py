"""FROST / rime_new on the headdims suite across calls: FROST from V2, rime_new from X1, and
rime_main (the same binary in both calls) as the control. Usage: python3 frost_estimate.py
(from the repository root). est = FROST(V2) / main(V2) x main(X1) / new(X1); direct = FROST(V2)
/ new(X1); old = FROST(V2) / main(V2), the ratio before the new envelopes."""
import json
import re
import statistics as st

D = "docs/gpu-runs/2026-12-07-day"


def rows(p):
    return {r["name"]: r for r in json.load(open(p))["results"] if "median_ms" in r}


def best(paths):
    out = {}
    for p in paths:
        for n, r in rows(p).items():
            out[n] = min(out.get(n, 1e9), r["median_ms"])
    return out


main_v2 = best([f"{D}/V2/hd_main_{i}/results.json" for i in (1, 2)])
main_x1 = best([f"{D}/X1/hd_main_{i}/results.json" for i in (1, 2)])
new_x1 = best([f"{D}/X1/hd_new_{i}/results.json" for i in (1, 2)])
route = {n: r["route"] for n, r in rows(f"{D}/X1/hd_new_1/results.json").items()}
frost = {}
for line in open(f"{D}/V2/frost_hd.jsonl"):
    if line.startswith("{"):
        r = json.loads(line)
        if "case" in r and "ms" in r:
            c = r["case"]
            frost[(c["d"], c["causal"], c["bias"], c["deterministic"])] = r["ms"]
ctl = [main_x1[n] / main_v2[n] for n in main_v2]
print(f"control main X1 / V2: median {st.median(ctl):.3f}, {min(ctl):.3f}-{max(ctl):.3f}")
for n in new_x1:
    d = int(re.search(r" d(\d+)", n).group(1))
    f = frost.get((d, " causal" in n, "batch" if "bias=batch" in n else "none", " det " in n))
    if f is None:
        continue
    print(f"{n:52s} {route[n]:10s} new={new_x1[n]:.3f} FROST={f:.3f} "
          f"est={f / main_v2[n] * main_x1[n] / new_x1[n]:.2f} direct={f / new_x1[n]:.2f} "
          f"old={f / main_v2[n]:.2f}")
