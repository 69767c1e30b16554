"""PyTorch's public varlen attention (torch.nn.attention.varlen.varlen_attn, a custom op whose
backward calls the flash, or on some devices cuDNN, attention backward) as a THD peer: the THD
cases of a rime bench cases.json (rows with "lens": per-batch lengths, Q and KV alike), packed
(T, H, D) tensors with cu_seq = exclusive prefix sums of the lengths (int32).

Times torch.autograd.grad(out, (q, k, v), dO) after one forward: median of 20 after 5 warm-ups,
CUDA events, like torch_sdpa_bwd.py (so autograd's small host overhead is included). FLOPs count
the real tokens only, as rime does: sum over b of 10 * Hq * len_b^2 * D, halved when causal.
Keyword arguments follow the installed signature (read with inspect): is_causal= (2.10) or
window_size=(-1, 0) (later), scale=, enable_gqa= when present. Deterministic rows run under
torch.use_deterministic_algorithms(True); a refusal is reported, not hidden.

usage: python3 torch_varlen_thd_bwd.py cases.json > torch_thd.jsonl
Rows without "lens", or padded ones ("layout": "bshd"), are printed with "skipped"; a failing
case prints an "error" field.
"""
import inspect
import json
import math
import sys

import torch

WARMUP, ITERS = 5, 20
DT = {"bf16": torch.bfloat16, "f16": torch.float16}


def run_case(c, varlen_attn, params):
    rec = {"case": c, "backend": "TORCH_VARLEN"}
    if "lens" not in c or c.get("layout", "thd") != "thd":
        rec["skipped"] = "not a THD case (no lens, or padded)"
        return rec
    lens = [int(x) for x in c["lens"]]
    hq, hk, d = c["hq"], c["hk"], c["d"]
    dv = c.get("dv", d)
    causal, det = bool(c.get("causal")), bool(c.get("deterministic"))
    dtype = DT[c.get("dtype", "bf16")]
    total, smax = sum(lens), max(lens)
    torch.manual_seed(0)
    mk = lambda h, dd: torch.randn(total, h, dd, device="cuda", dtype=dtype, requires_grad=True)
    q, k, v = mk(hq, d), mk(hk, d), mk(hk, dv)
    cu = torch.tensor([0] + [sum(lens[: i + 1]) for i in range(len(lens))], dtype=torch.int32, device="cuda")
    kw = {}
    if "is_causal" in params:
        kw["is_causal"] = causal
    elif "window_size" in params:
        kw["window_size"] = (-1, 0) if causal else (-1, -1)
    elif causal:
        rec["error"] = "this varlen_attn has neither is_causal nor window_size"
        return rec
    if "scale" in params:
        kw["scale"] = 1.0 / math.sqrt(d)
    if hq != hk and "enable_gqa" in params:
        kw["enable_gqa"] = True
    rec["kwargs"] = {k2: v2 for k2, v2 in kw.items()}
    torch.use_deterministic_algorithms(det)
    try:
        out = varlen_attn(q, k, v, cu, cu, smax, smax, **kw)
        grad = torch.randn_like(out)
        fn = lambda: torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)
        for _ in range(WARMUP):
            fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(ITERS):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record(); fn(); b.record(); torch.cuda.synchronize()
            ts.append(a.elapsed_time(b))
        ts.sort()
        ms = ts[len(ts) // 2]
        flops = sum(10 * hq * n * n * d for n in lens) * (0.5 if causal else 1.0)
        rec.update(ms=ms, min_ms=ts[0], max_ms=ts[-1], tflops=flops / ms / 1e9, flops=flops, tokens=total)
    except Exception as e:
        rec["error"] = (f"{type(e).__name__}: {e}".splitlines() or [type(e).__name__])[0][:300]
    finally:
        torch.use_deterministic_algorithms(False)
        torch.cuda.empty_cache()
    return rec


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    cases = json.load(open(sys.argv[1]))
    try:
        from torch.nn.attention.varlen import varlen_attn
        params = set(inspect.signature(varlen_attn).parameters)
    except Exception as e:
        print(json.dumps({"error": f"no torch.nn.attention.varlen.varlen_attn: {type(e).__name__}: {e}",
                          "torch": torch.__version__}), flush=True)
        return
    print(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name(),
                      "varlen_attn_params": sorted(params)}), flush=True)
    for c in cases:
        try:
            rec = run_case(c, varlen_attn, params)
        except Exception as e:  # never lose the rest of the run
            rec = {"case": c, "backend": "TORCH_VARLEN", "error": f"{type(e).__name__}: {e}"[:300]}
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
