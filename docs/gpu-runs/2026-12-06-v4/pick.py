#!/usr/bin/env python3
"""Which candidate of a call beats main: for each binary B (runs std_B_N/, sinks_B_N/ in
CALL_DIR), each row's faster median of B's runs over the faster median of main's, the geometric
mean over the standard suite's and the sinks suite's rows together. Prints every candidate's
ratio and writes the best name to OUT (main unless one is below 0.995).
usage: pick.py CALL_DIR OUT CANDIDATE..."""
import glob, json, math, sys


def runs(d, suite, b):
    out = []
    for r in sorted(glob.glob(f"{d}/{suite}_{b}_*/results.json")):
        out.append([x.get("median_ms") for x in json.load(open(r))["results"]])
    return out


def best_of(rs, i):
    v = [r[i] for r in rs if r[i] is not None]
    return min(v) if v else None


d, out = sys.argv[1], sys.argv[2]
best, best_g = "main", 0.995
for b in sys.argv[3:]:
    logs = []
    for suite in ("std", "sinks"):
        a, c = runs(d, suite, "main"), runs(d, suite, b)
        if not a or not c:
            continue
        for i in range(len(a[0])):
            x, y = best_of(a, i), best_of(c, i)
            if x and y:
                logs.append(math.log(y / x))
    g = math.exp(sum(logs) / len(logs)) if logs else float("nan")
    print(f"{b}: {g:.4f} over {len(logs)} rows")
    if logs and g < best_g:
        best, best_g = b, g
open(out, "w").write(best + "\n")
print("best:", best)
