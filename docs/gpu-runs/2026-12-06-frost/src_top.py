#!/usr/bin/env python3
"""Top stall sites of an ncu source view (`ncu -i REP --page source --csv --print-source sass`):
the N SASS instructions with the most warp-stall samples, their share and main reasons, and the
per-reason totals. usage: src_top.py CSV [N]"""
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hdr, data = rows[1], rows[2:]
ix = {h: i for i, h in enumerate(hdr)}
S = ix["Warp Stall Sampling (All Samples)"]
E = ix["Instructions Executed"]
cols = [c for c in hdr if c.startswith("stall_") and "(" not in c]
tot = sum(int(r[S] or 0) for r in data)
print(f"{len(data)} SASS instructions, {tot} stall samples")
sums = sorted(((sum(int(r[ix[c]] or 0) for r in data), c[6:]) for c in cols), reverse=True)
print("by reason:", ", ".join(f"{c} {100 * v / tot:.1f}%" for v, c in sums[:10]))
n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
for k in sorted(range(len(data)), key=lambda k: -int(data[k][S] or 0))[:n]:
    r = data[k]
    why = sorted(((int(r[ix[c]] or 0), c[6:]) for c in cols), reverse=True)[:3]
    print(f"{k:5d} {100 * int(r[S]) / tot:5.2f}% exec {r[E]:>9s}  {r[1].strip()[:64]:64s} "
          + ", ".join(f"{c} {v}" for v, c in why))
