#!/usr/bin/env python3
"""Export an SDPA backward problem from PyTorch for `rime run`, and compare rime's gradients
with torch.autograd.

    python examples/torch_export.py export DIR     # DIR/graph.json, DIR/inputs.safetensors,
                                                   # DIR/reference.safetensors (autograd grads)
    rime run DIR/graph.json --inputs DIR/inputs.safetensors --outputs DIR/rime.safetensors
    python examples/torch_export.py compare DIR    # max abs / rel error per gradient

The problem: bf16, B=2, Hq=4, Hk=Hv=2 (GQA), S=128, D=64, causal (top-left), a per-head bias
broadcast over the batch (1, Hq, S, S) with dBias, Q/K/V/dQ/dK/dV stored BSHD (only strides say
so). safetensors files hold logical (B, H, S, D) tensors, contiguous, by graph tensor name.
The reference is torch.autograd in float32 on the same bf16-rounded inputs.
Needs: torch, safetensors, numpy.
"""
import json
import math
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

B, HQ, HK, S, D = 2, 4, 2, 128, 64
SCALE = 1.0 / math.sqrt(D)


def packed(dims):
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * dims[i + 1]
    return strides


def bshd(dims):
    b, h, s, d = dims
    return [s * h * d, d, h * d, 1]


def graph():
    tensors = {}

    def add(name, dims, strides, **extra):
        tensors[name] = {"dims": dims, "strides": strides, **extra}

    q, kv = [B, HQ, S, D], [B, HK, S, D]
    for name, dims in [("Q", q), ("K", kv), ("V", kv), ("dQ", q), ("dK", kv), ("dV", kv)]:
        add(name, dims, bshd(dims))
    add("O", q, packed(q))
    add("dO", q, packed(q))
    add("Stats", [B, HQ, S, 1], packed([B, HQ, S, 1]), data_type="f32")
    add("Bias", [1, HQ, S, S], packed([1, HQ, S, S]))
    add("dBias", [1, HQ, S, S], packed([1, HQ, S, S]))
    return {
        "format": "rime.graph",
        "version": 1,
        "context": {"name": "torch_export", "io_data_type": "bf16",
                    "intermediate_data_type": "f32", "compute_data_type": "f32"},
        "tensors": tensors,
        "nodes": [{
            "tag": "SDPA_BWD", "name": "bwd",
            "inputs": {"Q": "Q", "K": "K", "V": "V", "O": "O", "dO": "dO", "Stats": "Stats",
                       "Bias": "Bias"},
            "outputs": {"dQ": "dQ", "dK": "dK", "dV": "dV", "dBias": "dBias"},
            "attn_scale": SCALE, "right_bound": 0, "diagonal_alignment": "TOP_LEFT",
        }],
    }


def attention(q, k, v, bias):
    """Plain attention in float32; returns O and the natural-log log-sum-exp (Stats)."""
    group = HQ // HK
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    s = SCALE * q @ k.transpose(-1, -2) + bias
    causal = torch.ones(S, S, dtype=torch.bool).tril()
    s = s.masked_fill(~causal, float("-inf"))
    return torch.softmax(s, dim=-1) @ v, torch.logsumexp(s, dim=-1, keepdim=True)


def export(out):
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    bf = lambda *shape: torch.randn(*shape).to(torch.bfloat16)
    q, k, v = bf(B, HQ, S, D), bf(B, HK, S, D), bf(B, HK, S, D)
    bias = (0.5 * torch.randn(1, HQ, S, S)).to(torch.bfloat16)
    d_o = bf(B, HQ, S, D)
    # Reference: float32 autograd on the bf16 values.
    leaves = [t.float().requires_grad_() for t in (q, k, v, bias)]
    o, stats = attention(*leaves)
    o.backward(d_o.float())
    (out / "graph.json").write_text(json.dumps(graph(), indent=2) + "\n")
    save_file({"Q": q, "K": k, "V": v, "Bias": bias, "dO": d_o,
               "O": o.detach().to(torch.bfloat16), "Stats": stats.detach().contiguous()},
              str(out / "inputs.safetensors"))
    grads = {name: t.grad.contiguous() for name, t in zip(["dQ", "dK", "dV", "dBias"], leaves)}
    save_file(grads, str(out / "reference.safetensors"))
    print(f"wrote {out}/graph.json, inputs.safetensors, reference.safetensors")


def formula_grads(inputs):
    """The backward formula of sdpa-backward.md in float64 on exactly the inputs rime reads
    (bf16 O, float32 Stats): what rime computes, up to f32 accumulation and bf16 output."""
    x = {k: t.double() for k, t in inputs.items()}
    group = HQ // HK
    k, v = (x[n].repeat_interleave(group, dim=1) for n in ("K", "V"))
    s = SCALE * x["Q"] @ k.transpose(-1, -2) + x["Bias"]
    causal = torch.ones(S, S, dtype=torch.bool).tril()
    p = torch.exp(s - x["Stats"]).masked_fill(~causal, 0.0)
    d_o = x["dO"]
    delta = (d_o * x["O"]).sum(-1, keepdim=True)
    ds = p * (d_o @ v.transpose(-1, -2) - delta)
    fold = lambda t: t.reshape(B, HK, group, S, -1).sum(2)
    return {"dQ": SCALE * ds @ k, "dK": fold(SCALE * ds.transpose(-1, -2) @ x["Q"]),
            "dV": fold(p.transpose(-1, -2) @ d_o), "dBias": ds.sum(0, keepdim=True)}


def report(title, ref, got, tol):
    print(title)
    print(f"  {'tensor':<6} {'max abs err':>12} {'max |ref|':>10} {'max err/max|ref|':>17} "
          f"{'||err||/||ref||':>16}")
    worst = 0.0
    for name in ["dQ", "dK", "dV", "dBias"]:
        r, g = ref[name].double(), got[name].double()
        err = (g - r).abs().max().item()
        scale = r.abs().max().item()
        rel = ((g - r).norm() / r.norm()).item()
        worst = max(worst, rel)
        print(f"  {name:<6} {err:12.3e} {scale:10.3e} {err / scale:17.3e} {rel:16.3e}")
    print(f"  worst ||err||/||ref|| {worst:.3e} (tolerance {tol:g}): {'PASS' if worst <= tol else 'FAIL'}")
    return worst <= tol


def compare(out):
    got = load_file(str(out / "rime.safetensors"))
    ok = report("rime (bf16 out) vs torch.autograd (float32, same bf16 inputs):",
                load_file(str(out / "reference.safetensors")), got, 1e-2)
    ok &= report("rime (bf16 out) vs the float64 formula on rime's exact inputs (bf16 O, f32 Stats):",
                 formula_grads(load_file(str(out / "inputs.safetensors"))), got, 4e-3)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("export", "compare"):
        sys.exit(__doc__)
    (export if sys.argv[1] == "export" else compare)(Path(sys.argv[2]))
