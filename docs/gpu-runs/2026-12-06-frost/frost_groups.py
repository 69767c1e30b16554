#!/usr/bin/env python3
"""FROST time / rime time by row group (bias, determinism, sink, head dim) from one call:
usage: frost_groups.py RESULTS.json FROST.jsonl (rime bench --out DIR/results.json; the FROST
peer's output on DIR/cases.json). Deterministic rows compare FROST deterministic."""
import json, statistics, sys
sys.path.insert(0, __file__.rsplit("/docs/", 1)[0] + "/benches")
import join_peers as jp
rime = [x for x in json.load(open(sys.argv[1]))["results"] if x.get("median_ms")]
frost = {jp.key(p["case"]): p for p in map(json.loads, open(sys.argv[2])) if "case" in p and p.get("ms")}
groups = {}
for x in rime:
    p = frost.get(jp.key(x["case"]))
    if p is None or x["case"].get("dtype", "bf16") != "bf16":  # FROST's peer builds bf16 only
        continue
    c = x["case"]
    g = (c["bias"], "det" if c["deterministic"] else "non-det", "sink" if c.get("sink") else "-",
         f"d{c['d']}/{c.get('dv', c['d'])}")
    groups.setdefault(g, []).append(p["ms"] / x["median_ms"])
for g, v in sorted(groups.items()):
    print(" ".join(g), len(v), f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})")
