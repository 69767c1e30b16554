#!/usr/bin/env python3
"""FROST time / rime time per bf16 row, and the median, of the non-deterministic no-bias rows of
the standard suite and the non-deterministic rows of the sinks suite of one call. usage:
frost_rows.py CALL_DIR [RUN [FROST_RUN]] (with std_RUN/, sinks_RUN/ from `rime bench --out`, RUN
"final" unless given, and frost_std.jsonl, frost_sinks.jsonl from FROST's peer on their
cases.json; with FROST_RUN, frost_std_FROST_RUN.jsonl and frost_sinks_FROST_RUN.jsonl). RUN and
FROST_RUN may be glob patterns ("head_*", "*"): each row then takes the least time of the
runs they match, on each side."""
import glob, json, statistics, sys
sys.path.insert(0, __file__.rsplit("/docs/", 1)[0] + "/benches")
import join_peers as jp


def rows(rime_results, frost_files, pred):
    rime, frost = {}, {}
    for rj in rime_results:
        for x in json.load(open(rj))["results"]:
            c = x["case"]
            if x.get("median_ms") and c.get("dtype", "bf16") == "bf16" and pred(c):
                k = jp.key(c)
                best = min(x["median_ms"], rime.get(k, (0, 0, 1e9))[2])
                rime[k] = (x["name"], x["route"], best)
    for fj in frost_files:
        for p in map(json.loads, open(fj)):
            if "case" in p and p.get("ms"):
                k = jp.key(p["case"])
                frost[k] = min(p["ms"], frost.get(k, 1e9))
    return [(n, ro, a, frost[k], frost[k] / a) for k, (n, ro, a) in rime.items() if k in frost]


d = sys.argv[1]
run = sys.argv[2] if len(sys.argv) > 2 else "final"
frost = "_" + sys.argv[3] if len(sys.argv) > 3 else ""
for lab, suite, pred in [
    ("standard, no bias, non-deterministic", "std", lambda c: c["bias"] == "none" and not c["deterministic"]),
    ("sinks, non-deterministic", "sinks", lambda c: not c["deterministic"]),
]:
    r = rows(sorted(glob.glob(f"{d}/{suite}_{run}/results.json")), sorted(glob.glob(f"{d}/frost_{suite}{frost}.jsonl")), pred)
    for n, ro, a, f, q in r:
        print(f"{n:58s} {ro:10s} rime {a:.3f} frost {f:.3f} {q:.3f}")
    v = [q for *_, q in r]
    print(f"== {lab}: {len(v)} rows, median {statistics.median(v):.3f}, range {min(v):.3f}-{max(v):.3f}")
