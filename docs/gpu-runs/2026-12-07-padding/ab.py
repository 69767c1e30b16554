#!/usr/bin/env python3
# A/B of bench --out results from one machine: `ab.py NAME=RESULTS.json ...`, the first the
# baseline; per row each run's median ms (tc: the baseline ran tensor copies), then each run / the
# first as geometric mean, min and max over the rows all runs have. Made ab_std.txt, ab_hd.txt.
import json, math, sys
def load(p):
    d=json.load(open(p)); return {r['name']+' '+str(r['case'].get('causal'))+' '+str(r['case'].get('deterministic'))+' '+r.get('route','?'): r for r in d['results'] if r.get('median_ms')}
def gm(xs): return math.exp(sum(map(math.log,xs))/len(xs)) if xs else float('nan')
runs = [(n, load(p)) for n,p in [a.split('=') for a in sys.argv[1:]]]
keys = [k for k in runs[0][1] if all(k in r for _,r in runs)]
print(f"{'row':70s} " + " ".join(f"{n:>9s}" for n,_ in runs))
for k in keys:
    print(f"{k[:70]:70s} " + " ".join(f"{r[k]['median_ms']:9.4f}" for _,r in runs) + "  " + ("tc" if runs[0][1][k].get('tensor_copies') else ""))
base = runs[0][1]
for n,r in runs[1:]:
    rat=[r[k]['median_ms']/base[k]['median_ms'] for k in keys]
    print(f"{n}/{runs[0][0]}: geomean {gm(rat):.4f} min {min(rat):.4f} max {max(rat):.4f} over {len(rat)} rows")
