"""cuDNN frontend (the real one, from PyPI) as a THD peer: ragged (packed variable-length) SDPA
backward on the THD cases of a rime bench cases.json (rows with "lens": one sequence length per
batch, Q and KV alike, as `rime bench --suite thd --out DIR` writes them).

Every token tensor is packed THD (tokens of all sequences back to back; token stride H*D, head
stride D) with int64 ragged offsets = exclusive prefix sums of len * H * D (Stats: len * H), as
rime's graph and the frontend's own tests (test/python/sdpa/fp16.py) build them: ragged offsets on
Q, K, V, O, dO, dQ, dK, dV and Stats, seq_len_q/kv (int32) with the padding mask, causal as
diagonal_band_right_bound=0 (top-left; equal Q and KV lengths, so bottom-right is the same).
O and Stats come from the frontend's THD forward on the same inputs (random when that forward is
refused; the line says which). Timed with CUDA events: median of 20 after 3 warm-ups, like
cudnn_fe_sdpa_bwd.py. FLOPs count the real tokens only, as rime does:
sum over b of 10 * Hq * len_b^2 * D, halved when causal.

Buffers hold max(64, ceil64(sum(lens))) tokens and max_total_seq_len_q/kv is that count, as the
frontend's tests do (rime passes the exact sum; it only sizes workspaces).

Lines carry backend CUDNN_FE (as cudnn_fe_sdpa_bwd.py's), so benches/join_peers.py joins them
with rime's THD rows (its case key includes "lens").

usage: python3 cudnn_fe_thd_bwd.py cases.json [--check] > cudnn_thd.jsonl
  --check: also compare dQ, dK, dV with a float32 PyTorch autograd reference per sequence
           (only when O and Stats came from the forward), reported as max |err| / max |ref|.
Rows without "lens", or padded ones ("layout": "bshd"), are printed with "skipped". A case that
fails prints an "error" field (and the stage: build_fwd, fwd, build_bwd, execute, check) and the
run goes on.
"""
import json
import math
import sys
import traceback

import torch
import cudnn

DT = {"bf16": (torch.bfloat16, cudnn.data_type.BFLOAT16), "f16": (torch.float16, cudnn.data_type.HALF)}
WARMUP, ITERS = 3, 20


def thd_dims(B, H, S, D):
    """Graph dims (B, H, S, D) and THD strides: batch stride unused (the offsets place sequences)."""
    return [B, H, S, D], [S * H * D, D, H * D, 1]


def offsets(lens, per_token):
    o = [0]
    for n in lens:
        o.append(o[-1] + n * per_token)
    return torch.tensor(o, dtype=torch.int64, device="cuda").view(-1, 1, 1, 1)


class Problem:
    """The packed buffers of one THD case."""

    def __init__(self, c):
        self.tdt, self.cdt = DT[c.get("dtype", "bf16")]
        self.lens = [int(x) for x in c["lens"]]
        self.B = len(self.lens)
        if c.get("b", self.B) != self.B:
            raise ValueError(f"b={c['b']} but {self.B} lens")
        self.Hq, self.Hk, self.D = c["hq"], c["hk"], c["d"]
        self.Dv = c.get("dv", self.D)
        self.S = max(self.lens)
        self.causal = bool(c.get("causal"))
        self.det = bool(c.get("deterministic"))
        self.scale = 1.0 / math.sqrt(self.D)
        total = sum(self.lens)
        self.T = max(64, (total + 63) // 64 * 64)  # tokens allocated, and max_total_seq_len
        g = torch.Generator(device="cuda").manual_seed(1)
        r = lambda h, d: torch.randn(self.T, h, d, device="cuda", dtype=self.tdt, generator=g)
        self.q, self.k, self.v = r(self.Hq, self.D), r(self.Hk, self.D), r(self.Hk, self.Dv)
        self.do = r(self.Hq, self.Dv) * 0.1
        self.o = torch.zeros(self.T, self.Hq, self.Dv, device="cuda", dtype=self.tdt)
        self.stats = torch.zeros(self.T, self.Hq, 1, device="cuda", dtype=torch.float32)
        self.dq, self.dk, self.dv = (torch.empty_like(x) for x in (self.q, self.k, self.v))
        self.seq = torch.tensor(self.lens, dtype=torch.int32, device="cuda").view(-1, 1, 1, 1)
        self.off = {
            "q": offsets(self.lens, self.Hq * self.D),
            "k": offsets(self.lens, self.Hk * self.D),
            "v": offsets(self.lens, self.Hk * self.Dv),
            "o": offsets(self.lens, self.Hq * self.Dv),
            "stats": offsets(self.lens, self.Hq),
        }

    def random_o_stats(self):
        self.o.normal_()
        for b, n in enumerate(self.lens):
            start = sum(self.lens[:b])
            self.stats[start:start + n] = math.log(max(n, 1)) + 0.5 * torch.rand(n, self.Hq, 1, device="cuda")

    def flops(self):
        f = sum(10 * self.Hq * n * n * self.D for n in self.lens)
        return f * (0.5 if self.causal else 1.0)


def new_graph(p, handle):
    return cudnn.pygraph(io_data_type=p.cdt, intermediate_data_type=cudnn.data_type.FLOAT,
                         compute_data_type=cudnn.data_type.FLOAT, handle=handle)


def common_inputs(g, p):
    """Q, K, V, the lengths and the offsets tensors of graph g, with their buffers."""
    bufs = {}

    def t(name, dims, strides, dtype, buf):
        x = g.tensor(name=name, dim=dims, stride=strides, data_type=dtype)
        bufs[x] = buf
        return x

    off = {k: t(f"{k}_offsets", [p.B + 1, 1, 1, 1], [1, 1, 1, 1], cudnn.data_type.INT64, v)
           for k, v in p.off.items()}
    q = t("Q", *thd_dims(p.B, p.Hq, p.S, p.D), p.cdt, p.q)
    k = t("K", *thd_dims(p.B, p.Hk, p.S, p.D), p.cdt, p.k)
    v = t("V", *thd_dims(p.B, p.Hk, p.S, p.Dv), p.cdt, p.v)
    q.set_ragged_offset(off["q"]); k.set_ragged_offset(off["k"]); v.set_ragged_offset(off["v"])
    sq = t("seq_len_q", [p.B, 1, 1, 1], [1, 1, 1, 1], cudnn.data_type.INT32, p.seq)
    skv = t("seq_len_kv", [p.B, 1, 1, 1], [1, 1, 1, 1], cudnn.data_type.INT32, p.seq)
    return bufs, off, q, k, v, sq, skv, t


def mask_kw(p, sq, skv):
    kw = dict(attn_scale=p.scale, use_padding_mask=True, seq_len_q=sq, seq_len_kv=skv)
    if p.causal:
        kw.update(diagonal_band_right_bound=0)
    return kw


def finish(g):
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    g.check_support()
    g.build_plans()


def forward(p, handle):
    """The THD forward writes p.o and p.stats (ragged, like the backward reads them)."""
    g = new_graph(p, handle)
    bufs, off, q, k, v, sq, skv, _ = common_inputs(g, p)
    kw = dict(name="sdpa", q=q, k=k, v=v, **mask_kw(p, sq, skv))
    try:
        o, stats = g.sdpa(generate_stats=True, **kw)
    except TypeError:  # frontends before generate_stats
        o, stats = g.sdpa(is_inference=False, **kw)
    o.set_output(True).set_dim(thd_dims(p.B, p.Hq, p.S, p.Dv)[0]).set_stride(thd_dims(p.B, p.Hq, p.S, p.Dv)[1])
    o.set_ragged_offset(off["o"])
    sd, ss = thd_dims(p.B, p.Hq, p.S, 1)
    stats.set_output(True).set_data_type(cudnn.data_type.FLOAT).set_dim(sd).set_stride(ss)
    stats.set_ragged_offset(off["stats"])
    bufs[o], bufs[stats] = p.o, p.stats
    finish(g)
    ws = torch.empty(max(g.get_workspace_size(), 1), device="cuda", dtype=torch.uint8)
    g.execute(bufs, ws, handle=handle)
    torch.cuda.synchronize()


def backward(p, handle):
    g = new_graph(p, handle)
    bufs, off, q, k, v, sq, skv, t = common_inputs(g, p)
    o = t("O", *thd_dims(p.B, p.Hq, p.S, p.Dv), p.cdt, p.o)
    dO = t("dO", *thd_dims(p.B, p.Hq, p.S, p.Dv), p.cdt, p.do)
    st = t("Stats", *thd_dims(p.B, p.Hq, p.S, 1), cudnn.data_type.FLOAT, p.stats)
    o.set_ragged_offset(off["o"]); dO.set_ragged_offset(off["o"]); st.set_ragged_offset(off["stats"])
    kw = dict(name="sdpa_backward", q=q, k=k, v=v, o=o, dO=dO, stats=st,
              max_total_seq_len_q=p.T, max_total_seq_len_kv=p.T, **mask_kw(p, sq, skv))
    if p.det:
        kw.update(use_deterministic_algorithm=True)
    dq, dk, dv = g.sdpa_backward(**kw)[:3]
    for x, like, name, h, d in ((dq, p.dq, "q", p.Hq, p.D), (dk, p.dk, "k", p.Hk, p.D), (dv, p.dv, "v", p.Hk, p.Dv)):
        dims, strides = thd_dims(p.B, h, p.S, d)
        x.set_output(True).set_dim(dims).set_stride(strides).set_ragged_offset(off[name])
        bufs[x] = like
    finish(g)
    return g, bufs


def check(p):
    """max |err| / max |ref| of dQ, dK, dV against float32 autograd, sequence by sequence."""
    err = {"dQ": [0.0, 0.0], "dK": [0.0, 0.0], "dV": [0.0, 0.0]}
    rep = p.Hq // p.Hk
    start = 0
    for n in p.lens:
        if n == 0:
            continue
        s = slice(start, start + n)
        start += n
        f = lambda x: x[s].transpose(0, 1).float().detach().requires_grad_(True)  # (H, n, D)
        q, k, v = f(p.q), f(p.k), f(p.v)
        kk, vv = k.repeat_interleave(rep, dim=0), v.repeat_interleave(rep, dim=0)
        out = torch.nn.functional.scaled_dot_product_attention(q, kk, vv, is_causal=p.causal, scale=p.scale)
        gq, gk, gv = torch.autograd.grad(out, (q, k, v), p.do[s].transpose(0, 1).float())
        for name, ref, got in (("dQ", gq, p.dq), ("dK", gk, p.dk), ("dV", gv, p.dv)):
            got = got[s].transpose(0, 1).float()
            err[name][0] = max(err[name][0], (got - ref).abs().max().item())
            err[name][1] = max(err[name][1], ref.abs().max().item())
    return {k: e / max(m, 1e-30) for k, (e, m) in err.items()}


def run_case(c, handle, want_check):
    rec = {"case": c, "backend": "CUDNN_FE"}
    if "lens" not in c or c.get("layout", "thd") != "thd":
        rec["skipped"] = "not a THD case (no lens, or padded)"
        return rec
    stage = "setup"
    try:
        p = Problem(c)
        stage = "fwd"
        try:
            forward(p, handle)
            rec["o_stats"] = "forward"
        except Exception as e:
            rec["o_stats"] = "random"
            rec["forward_error"] = f"{type(e).__name__}: {e}".splitlines()[0][:300]
            p.random_o_stats()
        stage = "build_bwd"
        g, bufs = backward(p, handle)
        stage = "execute"
        ws = torch.empty(max(g.get_workspace_size(), 1), device="cuda", dtype=torch.uint8)
        for _ in range(WARMUP):
            g.execute(bufs, ws, handle=handle)
        torch.cuda.synchronize()
        ts = []
        for _ in range(ITERS):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record(); g.execute(bufs, ws, handle=handle); b.record(); torch.cuda.synchronize()
            ts.append(a.elapsed_time(b))
        ts.sort()
        ms = ts[len(ts) // 2]
        rec.update(ms=ms, min_ms=ts[0], max_ms=ts[-1], tflops=p.flops() / ms / 1e9, flops=p.flops(),
                   tokens=sum(p.lens), max_total_seq_len=p.T, workspace=g.get_workspace_size())
        if want_check and rec["o_stats"] == "forward":
            stage = "check"
            rec["rel_err"] = check(p)
        try:
            rec["dump"] = repr(g)
        except Exception:
            pass
        del g, bufs, ws
    except Exception as e:
        rec["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:300] if str(e) else type(e).__name__
        rec["stage"] = stage
        rec["trace"] = traceback.format_exc().splitlines()[-3:]
    torch.cuda.empty_cache()
    return rec


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        sys.exit(__doc__)
    cases = json.load(open(args[0]))
    try:
        handle = cudnn.create_handle()
        print(json.dumps({"cudnn_frontend": getattr(cudnn, "__version__", "?"), "cudnn": cudnn.backend_version(),
                          "torch": torch.__version__, "device": torch.cuda.get_device_name()}), flush=True)
    except Exception as e:
        print(json.dumps({"error": f"no cuDNN handle: {type(e).__name__}: {e}"}), flush=True)
        return
    for c in cases:
        try:
            rec = run_case(c, handle, "--check" in sys.argv)
        except Exception as e:  # never lose the rest of the run
            rec = {"case": c, "backend": "CUDNN_FE", "error": f"{type(e).__name__}: {e}"[:300]}
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
