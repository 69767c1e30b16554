"""Joins `rime bench` results with the peers' output from the same GPU run.

Usage: python3 benches/join_peers.py RESULTS.json OUT.md CHART.svg PEERS.jsonl... [--repeat R2.json] [--tuned T.json]

RESULTS.json: `rime bench --out DIR` writes DIR/results.json.
PEERS.jsonl: one JSON object per line, from any of the peer scripts run on DIR/cases.json:
  benches/torch_sdpa_bwd.py (FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION), on THD rows
  (`rime bench --suite thd`) benches/cudnn_fe_thd_bwd.py (CUDNN_FE) and
  benches/torch_varlen_thd_bwd.py (TORCH_VARLEN: torch.nn.attention.varlen.varlen_attn), the cuDNN
  frontend peer (CUDNN_FE: cuDNN's own Hopper kernels, a reference point only, they use wgmma) and
  the FROST peer (FROST_SM120: the cuDNN frontend 1.32 SM120 DSL kernels, the seed rime must beat).
A row with per-batch lengths ("lens": thd and padding suites) joins only the THD scripts' records;
  a dense peer's records of such rows are counted under "not joined" instead.
--repeat R2.json: a second `rime bench` of the same binary later in the same run (after the peers);
  the table gets the repeat ratio (first time / second time) per case and its median.
--tuned T.json: `rime bench --tuning h200` in the same run; the table gets the SM120 configuration's
  time over the H200-tuned one's (SM120 time / tuned time, below 1: the tuned kernel is faster).
Writes a markdown section (per-case table, speed ratios, the targets) and an SVG chart of TFLOP/s
by case. Speed ratio = peer time / rime time (above 1: rime is faster). Standard library only.
"""
import json
import statistics
import sys

BACKENDS = ("FROST_SM120", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "CUDNN_FE",
            "TORCH_VARLEN")
SHORT = {"FROST_SM120": "FROST", "FLASH_ATTENTION": "FLASH", "EFFICIENT_ATTENTION": "EFFICIENT",
         "CUDNN_ATTENTION": "torch-CUDNN", "CUDNN_FE": "cuDNN-FE", "TORCH_VARLEN": "torch-varlen"}
KEYS = ("b", "hq", "hk", "sq", "skv", "d", "dv", "causal", "bias", "dtype", "deterministic", "sink", "lens",
        "layout")


def key(case):
    """A case's identity; "dv" defaults to "d", "sink" (only on sink rows) to false, "lens" and
    "layout" (only on rows with per-batch lengths: "thd" packed, "bshd" padded) to none; a
    THD row and its padded twin differ in "layout" alone."""
    defaults = {"dv": case["d"], "sink": False}
    v = lambda k: case.get(k, defaults.get(k))
    return tuple(tuple(v(k)) if isinstance(v(k), list) else v(k) for k in KEYS)


def load_peers(paths):
    peers, meta, dropped = {}, [], {}
    for path in paths:
        for line in open(path):
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if "case" not in r:
                meta.append(r)
                continue
            # The FROST peer builds every case in bf16: its f16 rows would time another dtype.
            if r["backend"] == "FROST_SM120" and r["case"].get("dtype", "bf16") != "bf16":
                continue
            # A row with per-batch lengths joins only what the THD scripts timed (torch-varlen,
            # and the THD cuDNN-FE script, whose records carry "o_stats"): the dense scripts
            # (FROST's, PyTorch's, the dense cuDNN-FE one) ignore "lens" and would time the
            # whole padded problem without a mask under the row's key.
            if "lens" in r["case"] and not (r["backend"] == "TORCH_VARLEN" or "o_stats" in r):
                dropped[r["backend"]] = dropped.get(r["backend"], 0) + 1
                continue
            peers.setdefault(key(r["case"]), {})[r["backend"]] = r
    if dropped:
        meta.append({"not joined": dropped, "why": "dense peers' records of rows with per-batch lengths"})
    return peers, meta


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def by_key(results):
    return {key(r["case"]): r for r in results["results"]} if results else {}


def join(rime, peers, repeat, tuned):
    rep, tun = by_key(repeat), by_key(tuned)
    rows = []
    for r in rime["results"]:
        p = peers.get(key(r["case"]), {})
        ms = {b: p[b]["ms"] for b in BACKENDS if b in p and "ms" in p[b]}
        rime_ms = r.get("median_ms")
        r2 = rep.get(key(r["case"]), {}).get("median_ms")
        t = tun.get(key(r["case"]), {})
        rows.append({
            "r": r,
            "ms": ms,
            "tflops": {b: p[b]["tflops"] for b in BACKENDS if b in p and "tflops" in p[b]},
            "vs": {b: (ms[b] / rime_ms if rime_ms else None) for b in ms},
            "repeat": (rime_ms / r2) if (rime_ms and r2) else None,
            "tuned": t,
            "vs_tuned": (rime_ms / t["median_ms"]) if (rime_ms and t.get("median_ms")) else None,
        })
    return rows


def median_or_none(xs):
    xs = [x for x in xs if x is not None]
    return (statistics.median(xs), len(xs)) if xs else (None, 0)


def targets(rows):
    """The SM120 backward redesign's targets, each as (name, wanted, measured, cases, met)."""
    c = lambda row: row["r"]["case"]
    frost = lambda rs: [row["vs"].get("FROST_SM120") for row in rs]
    bf16 = [row for row in rows if c(row)["dtype"] == "bf16"]
    out = []

    def median_target(name, op, bound, xs):
        m, n = median_or_none(xs)
        met = m is not None and bound is not None and (m >= bound if op == ">=" else m <= bound)
        out.append((name, f"{op} {fmt(bound)}", m, n, met))

    nb = [row for row in bf16 if c(row)["bias"] == "none" and not c(row)["deterministic"]]
    median_target("no bias, non-deterministic: FROST time / rime time, median", ">=", 1.15, frost(nb))
    median_target("no bias, non-deterministic: FLASH time / rime time, median", ">=", 1.15,
                  [row["vs"].get("FLASH_ATTENTION") for row in nb])
    big = [row["r"].get("tflops") for row in nb if (c(row)["b"], c(row)["hq"], c(row)["sq"], c(row)["d"]) == (1, 16, 8192, 128)
           and not c(row)["causal"]]
    median_target("TFLOP/s at b1 h16 s8192 d128, no bias, non-causal", ">=", 325, big)
    nd = lambda bias: [row for row in bf16 if c(row)["bias"] == bias and not c(row)["deterministic"]]
    median_target("per-batch bias + dBias, non-deterministic: FROST time / rime time, median", ">=", 1.6, frost(nd("batch")))
    median_target("broadcast bias + dBias, non-deterministic: FROST time / rime time, median", ">=", 1.5, frost(nd("broadcast")))
    det = [row for row in bf16 if c(row)["bias"] == "batch" and c(row)["deterministic"]]
    median_target("deterministic per-batch bias + dBias: FROST deterministic time / rime time, median", ">=", 1.6, frost(det))
    twin = lambda row: key(dict(c(row), deterministic=False))  # the non-deterministic twin's key
    own_nd = {twin(row): row["r"].get("median_ms") for row in bf16 if not c(row)["deterministic"]}
    own = [row["r"]["median_ms"] / own_nd[twin(row)] for row in det if row["r"].get("median_ms") and own_nd.get(twin(row))]
    median_target("deterministic per-batch bias + dBias: rime deterministic time / rime non-deterministic time, median",
                  "<=", 1.1, own)
    m128, _ = median_or_none(frost([row for row in bf16 if c(row)["d"] == 128 and c(row)["hq"] == c(row)["hk"]]))
    for name, sel in (("d192/128", lambda cc: cc["d"] == 192), ("GQA", lambda cc: cc["hq"] != cc["hk"])):
        median_target(f"{name} rows: FROST time / rime time, median, at least the d128 MHA rows' median", ">=", m128,
                      frost([row for row in bf16 if sel(c(row))]))
    # Per envelope: a median over every tuned row would let the many d128 rows hide another one.
    for envelope in sorted({(c(row)["d"], c(row)["dv"]) for row in rows if row["vs_tuned"] is not None}):
        median_target(f"d{envelope[0]}/{envelope[1]}: SM120 configuration time / H200-tuned configuration time, median "
                      "(within 0.85x: <= 1/0.85)", "<=", 1 / 0.85,
                      [row["vs_tuned"] for row in rows if (c(row)["d"], c(row)["dv"]) == envelope])
    return out


def route_of(r):
    if r.get("route"):
        return r["route"]
    return "rejected " + ",".join(r.get("rejected", [])) if r.get("rejected") else r.get("error", "-")


def markdown(rime, rows, meta, has_repeat, has_tuned):
    lines = [f"Run: {rime['header']}.", ""]
    for m in meta:
        if "check" in m or "check_failed" in m:
            m = {k: v for k, v in m.items() if k != "tb"}
        lines.append(f"- peer: `{json.dumps(m)}`")
    lines += ["", "Speed ratio = peer median time / rime median time (above 1: rime faster); `-` = the backend "
              "refused the case (or rime rejected it). FROST rows are bf16 only (its peer builds bf16 tensors).", ""]
    present = [b for b in BACKENDS if any(b in row["ms"] for row in rows)]  # peers that ran
    head = ["case", "rime route", "rime kernels", "rime ms", "rime TFLOP/s"] + [f"{SHORT[b]} ms" for b in present] \
        + [f"vs {SHORT[b]}" for b in present]
    if has_repeat:
        head.append("repeat")
    if has_tuned:
        head += ["tuned kernels", "tuned ms", "SM120/tuned"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|---|---|---|" + "---:|" * (len(head) - 3))
    for row in rows:
        r = row["r"]
        cells = [r["name"], route_of(r), "+".join(r.get("kernels", [])) or "-", fmt(r.get("median_ms"), 3), fmt(r.get("tflops"), 1)]
        cells += [fmt(row["ms"].get(b), 3) for b in present] + [fmt(row["vs"].get(b)) for b in present]
        if has_repeat:
            cells.append(fmt(row["repeat"], 3))
        if has_tuned:
            t = row["tuned"]
            cells += ["+".join(t.get("kernels", [])) or "-", fmt(t.get("median_ms"), 3), fmt(row["vs_tuned"])]
        lines.append("| " + " | ".join(cells) + " |")
    if has_repeat:
        m, n = median_or_none([row["repeat"] for row in rows])
        lo = min((row["repeat"] for row in rows if row["repeat"]), default=None)
        hi = max((row["repeat"] for row in rows if row["repeat"]), default=None)
        lines += ["", f"Repeat ratio (first rime time / second rime time, same binary, same run): median {fmt(m, 3)} over {n} cases, "
                  f"range {fmt(lo, 3)}-{fmt(hi, 3)}."]
    lines += ["", "### Targets (this run)", "", "| target | wanted | measured | cases | met |", "|---|---|---:|---:|---|"]
    for name, want, m, n, ok in targets(rows):
        lines.append(f"| {name} | {want} | {fmt(m)} | {n} | {'yes' if ok else 'no'} |")
    return "\n".join(lines) + "\n"


def svg(rows, path):
    colors = {"rime": "#d62728", "FROST_SM120": "#ff7f0e", "FLASH_ATTENTION": "#1f77b4", "EFFICIENT_ATTENTION": "#2ca02c",
              "CUDNN_ATTENTION": "#9467bd", "CUDNN_FE": "#8c564b", "TORCH_VARLEN": "#17becf"}
    series = ["rime"] + [b for b in BACKENDS if any(b in row["tflops"] for row in rows)]
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
           '<text x="10" y="16" font-size="13">SDPA backward TFLOP/s on the H200 by case (FLOPs = 10*B*Hq*Sq*Skv*Dqk, halved when causal)</text>']
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
    args = sys.argv[1:]
    opts = {}
    for flag in ("--repeat", "--tuned"):
        if flag in args:
            i = args.index(flag)
            if i + 1 >= len(args):
                sys.exit(f"{flag} needs a results.json\n{__doc__}")
            opts[flag] = json.load(open(args[i + 1]))
            del args[i:i + 2]
    if len(args) < 4:
        sys.exit(__doc__)
    rime = json.load(open(args[0]))
    peers, meta = load_peers(args[3:])
    rows = join(rime, peers, opts.get("--repeat"), opts.get("--tuned"))
    open(args[1], "w").write(markdown(rime, rows, meta, "--repeat" in opts, "--tuned" in opts))
    svg(rows, args[2])


if __name__ == "__main__":
    main()
