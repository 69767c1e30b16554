#!/usr/bin/env python3
"""How far one side's times moved between two calls: per row (joined on the case), the time in
NEW / the time in OLD, each the least over the files given, then the median and range.
Files are `rime bench` results.json or FROST peer .jsonl. usage:
drift.py 'OLD_GLOB' 'NEW_GLOB'   e.g. drift.py '../2026-12-06-v4/J3/frost_std.jsonl' 'N2/frost_std_1.jsonl'"""
import glob, json, statistics, sys
sys.path.insert(0, __file__.rsplit("/docs/", 1)[0] + "/benches")
import join_peers as jp


def times(pattern):
    t = {}
    for f in glob.glob(pattern):
        rows = json.load(open(f))["results"] if f.endswith(".json") else map(json.loads, open(f))
        for x in rows:
            ms = x.get("median_ms", x.get("ms"))
            if "case" in x and ms:
                k = jp.key(x["case"])
                t[k] = min(ms, t.get(k, 1e9))
    return t


old, new = times(sys.argv[1]), times(sys.argv[2])
q = [new[k] / old[k] for k in old if k in new]
print(f"{len(q)} rows: new / old median {statistics.median(q):.3f}, range {min(q):.3f}-{max(q):.3f}")
