#!/usr/bin/env python3
"""Executed warp-level instructions by SASS opcode, per warp and main-loop step, from ncu's
source page (`ncu -i REP --page source --csv --print-source sass`, optionally xz-compressed),
for kernels with the same tiles side by side (calls Z4 and Z6: the no-bias d192 row,
b4 h16 s2048, 2,048 blocks of 8 compute warps walking 64 Q tiles each). Each column also gives
the opcode's share of the warp-stall samples.
usage: opmix.py WARP_STEPS SRC.csv[.xz]..."""
import collections, csv, io, lzma, re, sys


def read(path):
    raw = lzma.open(path, "rt") if path.endswith(".xz") else open(path)
    rows = list(csv.reader(io.StringIO(raw.read())))
    hdr = rows[1]
    src, ex, st = (hdr.index(h) for h in ("Source", "Instructions Executed",
                                              "Warp Stall Sampling (All Samples)"))
    count, stall = collections.Counter(), collections.Counter()
    for r in rows[2:]:
        m = re.match(r"(@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", r[src].strip()) if len(r) > ex else None
        if not m:
            continue
        count[m.group(2)] += int(r[ex].replace(",", "") or 0)
        stall[m.group(2)] += int(r[st].replace(",", "") or 0)
    return count, stall


steps = int(sys.argv[1])
cols = [(p.split("/")[-1].split(".")[0], *read(p)) for p in sys.argv[2:]]
ops = sorted(set().union(*(c for _, c, _ in cols)), key=lambda o: -max(c[o] for _, c, _ in cols))
print(f"executed warp instructions per warp-step ({steps:,} warp-steps); share of stall samples")
print(f"{'opcode':10}" + "".join(f"{n[:20]:>22}" for n, _, _ in cols))
for o in ops:
    if max(c[o] for _, c, _ in cols) / steps < 0.5:
        continue
    print(f"{o:10}" + "".join(f"{c[o] / steps:13.1f} ({100 * s[o] / max(1, sum(s.values())):4.1f}%)"
                             for _, c, s in cols))
print(f"{'total':10}" + "".join(f"{sum(c.values()) / steps:22.1f}" for _, c, _ in cols))
