"""Joins `rime bench` results with the PyTorch peer script's output from the same GPU run.

Usage: python3 benches/join_peers.py RESULTS.json PEERS.jsonl OUT.md CHART.svg
RESULTS.json: `rime bench --out DIR` writes DIR/results.json.
PEERS.jsonl: `python3 benches/torch_sdpa_bwd.py DIR/cases.json > PEERS.jsonl` (one JSON per line).
Writes a markdown section (per-case table, speed ratios, the issue-7 targets) and an SVG chart
of TFLOP/s by case. Speed ratio = PyTorch time / rime time (above 1: rime is faster).
Standard library only.
"""
import json
import statistics
import sys

BACKENDS = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION")
SHORT = {"FLASH_ATTENTION": "FLASH", "EFFICIENT_ATTENTION": "EFFICIENT", "CUDNN_ATTENTION": "CUDNN"}
KEYS = ("b", "hq", "hk", "sq", "skv", "d", "dv", "causal", "bias", "dtype", "deterministic")


def key(case):
    return tuple(case[k] for k in KEYS)


def load(results_path, peers_path):
    rime = json.load(open(results_path))
    peers, meta = {}, {}
    for line in open(peers_path):
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        if "case" not in r:
            meta = r
            continue
        peers.setdefault(key(r["case"]), {})[r["backend"]] = r
    return rime, peers, meta


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def join(rime, peers):
    rows = []
    for r in rime["results"]:
        p = peers.get(key(r["case"]), {})
        ms = {b: p[b]["ms"] for b in BACKENDS if b in p and "ms" in p[b]}
        best = min(ms.items(), key=lambda kv: kv[1]) if ms else None
        rime_ms = r.get("median_ms")
        row = {
            "r": r,
            "ms": ms,
            "tflops": {b: p[b]["tflops"] for b in BACKENDS if b in p and "tflops" in p[b]},
            "best": best,
            "vs": {b: (ms[b] / rime_ms if rime_ms else None) for b in ms},
            "vs_best": (best[1] / rime_ms) if (best and rime_ms) else None,
        }
        rows.append(row)
    return rows


def median_or_none(xs):
    xs = [x for x in xs if x is not None]
    return (statistics.median(xs), len(xs)) if xs else (None, 0)


def targets(rows):
    c = lambda row: row["r"]["case"]
    out = []
    nb = [row["vs"].get("FLASH_ATTENTION") for row in rows
          if c(row)["bias"] == "none" and not c(row)["deterministic"] and c(row)["dtype"] == "bf16"]
    m, n = median_or_none(nb)
    out.append(("no bias, non-deterministic: FLASH time / rime time, suite median", ">= 1.0", m, n, m is not None and m >= 1.0))
    bb = [row["vs"].get("EFFICIENT_ATTENTION") for row in rows
          if c(row)["bias"] != "none" and not c(row)["deterministic"]]
    m, n = median_or_none(bb)
    out.append(("bias + dBias, non-deterministic: EFFICIENT time / rime time, median", ">= 2.0", m, n, m is not None and m >= 2.0))
    db = [row["vs"].get("EFFICIENT_ATTENTION") for row in rows
          if c(row)["bias"] == "batch" and c(row)["deterministic"]]
    m, n = median_or_none(db)
    out.append(("deterministic per-batch bias + dBias: EFFICIENT (deterministic) time / rime time, median", ">= 4.0", m, n, m is not None and m >= 4.0))
    nd = {key(dict(c(row), deterministic=False)): row["r"].get("median_ms") for row in rows if not c(row)["deterministic"]}
    own = [row["r"]["median_ms"] / nd[key(dict(c(row), deterministic=False))] for row in rows
           if c(row)["bias"] == "batch" and c(row)["deterministic"] and row["r"].get("median_ms")
           and nd.get(key(dict(c(row), deterministic=False)))]
    m, n = median_or_none(own)
    out.append(("deterministic per-batch bias + dBias: rime deterministic time / rime non-deterministic time, median", "<= 1.2", m, n, m is not None and m <= 1.2))
    return out


def markdown(rime, rows, meta):
    lines = [f"Run: {rime['header']}; peers: torch {meta.get('torch')}, cuDNN {meta.get('cudnn')}, {meta.get('device')}.", ""]
    lines.append("Speed ratio = PyTorch median time / rime median time (above 1: rime faster); `-` = the backend refused the case (or rime rejected it).")
    lines.append("")
    lines.append("| case | rime route | rime ms | rime TFLOP/s | bias GB/s | FLASH ms | EFFICIENT ms | CUDNN ms | best PyTorch | vs best | vs FLASH | vs EFFICIENT | vs CUDNN |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    for row in rows:
        r = row["r"]
        route = r.get("route") or ("rejected " + ",".join(r.get("rejected", [])) if r.get("rejected") else r.get("error", "-"))
        lines.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            r["name"], route, fmt(r.get("median_ms"), 3), fmt(r.get("tflops"), 1), fmt(r.get("bias_gbps"), 0),
            *(fmt(row["ms"].get(b), 3) for b in BACKENDS),
            SHORT[row["best"][0]] if row["best"] else "-", fmt(row["vs_best"]),
            *(fmt(row["vs"].get(b)) for b in BACKENDS)))
    lines += ["", "### Issue 7 targets (this run)", "", "| target | wanted | measured | cases | met |", "|---|---|---:|---:|---|"]
    for name, want, m, n, ok in targets(rows):
        lines.append(f"| {name} | {want} | {fmt(m)} | {n} | {'yes' if ok else 'no'} |")
    return "\n".join(lines) + "\n"


def svg(rows, path):
    colors = {"rime": "#d62728", "FLASH_ATTENTION": "#1f77b4", "EFFICIENT_ATTENTION": "#2ca02c", "CUDNN_ATTENTION": "#9467bd"}
    series = ["rime"] + list(BACKENDS)
    vals = []
    for row in rows:
        v = {"rime": row["r"].get("tflops")}
        v.update(row["tflops"])
        vals.append(v)
    top = max([x for v in vals for x in v.values() if x] + [1.0])
    bar, gap, left, width = 5, 6, 430, 520
    row_h = bar * len(series) + gap
    height = 60 + row_h * len(rows)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 60}" height="{height}" font-family="sans-serif" font-size="10">',
           f'<text x="10" y="16" font-size="13">SDPA backward TFLOP/s on the H200 by case (FLOPs = 10*B*Hq*Sq*Skv*Dqk, halved when causal)</text>']
    for i, s in enumerate(series):
        out.append(f'<rect x="{10 + i * 120}" y="26" width="10" height="10" fill="{colors[s]}"/><text x="{24 + i * 120}" y="35">{SHORT.get(s, s)}</text>')
    for t in range(0, int(top) + 1, 50):
        x = left + width * t / top
        out.append(f'<line x1="{x:.1f}" y1="44" x2="{x:.1f}" y2="{height}" stroke="#ddd"/><text x="{x:.1f}" y="54" text-anchor="middle">{t}</text>')
    for i, (row, v) in enumerate(zip(rows, vals)):
        y = 60 + i * row_h
        out.append(f'<text x="{left - 4}" y="{y + row_h / 2:.1f}" text-anchor="end">{row["r"]["name"]}</text>')
        for j, s in enumerate(series):
            x = v.get(s)
            if x:
                out.append(f'<rect x="{left}" y="{y + j * bar}" width="{width * x / top:.1f}" height="{bar - 1}" fill="{colors[s]}"/>')
    out.append("</svg>")
    open(path, "w").write("\n".join(out) + "\n")


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    rime, peers, meta = load(sys.argv[1], sys.argv[2])
    rows = join(rime, peers)
    open(sys.argv[3], "w").write(markdown(rime, rows, meta))
    svg(rows, sys.argv[4])


if __name__ == "__main__":
    main()
