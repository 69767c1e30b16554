import json,statistics as st,sys
def rows(d):
    return {x['name']:x for x in json.load(open(d+'/results.json'))['results'] if x.get('median_ms')}
def ab(a,b,label):
    A,B=rows(a),rows(b); ks=[k for k in A if k in B]
    rs=[B[k]['median_ms']/A[k]['median_ms'] for k in ks]
    print(f"{label}: {len(ks)} rows, time {b}/{a}: median {st.median(rs):.3f} ({min(rs):.3f}-{max(rs):.3f})")
for a,b,l in [x.split(',') for x in sys.argv[1:]]: ab(a,b,l)
