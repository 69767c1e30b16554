#!/usr/bin/env python3
"""Summarises an `ncu --page source --csv --print-source sass` export (the raw CSVs are ~1 MB and
not kept): warp-stall samples by reason (all samples) and by SASS opcode, with each opcode's
share of executed instructions. Usage: ncu_sass_summary.py SASS_CSV [TITLE]"""
import collections
import csv
import sys


def num(x):
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0


rows = list(csv.reader(open(sys.argv[1])))
hi = next(i for i, r in enumerate(rows) if "Source" in r)
head = rows[hi]
recs = [dict(zip(head, r)) for r in rows[hi + 1:] if len(r) == len(head)]
reasons = [c for c in head if c.startswith("stall_") and "Not Issued" not in c]
exec_col = next((c for c in head if c.startswith("Instructions Executed")), None)
by_reason = collections.Counter()
by_op = collections.Counter()
ex_op = collections.Counter()
for r in recs:
    op = r["Source"].split()[0] if r["Source"].split() else "?"
    if op.startswith("@"):
        op = r["Source"].split()[1]
    op = op.split(".")[0]
    by_op[op] += num(r["Warp Stall Sampling (All Samples)"])
    if exec_col:
        ex_op[op] += num(r[exec_col])
    for c in reasons:
        by_reason[c] += num(r[c])
if len(sys.argv) > 2:
    print(sys.argv[2])
tot_r = sum(by_reason.values()) or 1
print("stall reason (all samples) | share")
for c, v in by_reason.most_common(10):
    print(f"{c:28s} {100 * v / tot_r:5.1f}%")
tot_o = sum(by_op.values()) or 1
tot_e = sum(ex_op.values()) or 1
print("SASS opcode | share of stall samples | share of executed instructions")
for op, v in by_op.most_common(14):
    print(f"{op:10s} {100 * v / tot_o:5.1f}% {100 * ex_op[op] / tot_e:5.1f}%")
