"""Attention problems shared by the CPU and GPU tests: inputs made from a seed, the options
rime takes, the same options for the float64 reference, and the checks of rime's results
against it."""

from dataclasses import dataclass, field
from typing import Optional, Tuple

import numpy as np

import reference as ref


@dataclass(frozen=True)
class Case:
    b: int = 1
    hq: int = 2
    hk: int = 2
    sq: int = 33
    skv: int = 47
    d: int = 16
    dv: int = 16
    causal: bool = False
    alignment: str = "top_left"
    window: Optional[Tuple[Optional[int], Optional[int]]] = None
    bias: Optional[Tuple[int, int]] = None  # (batch, heads) of the bias: (B or 1, Hq or 1)
    dbias: bool = False
    seq_lens: Optional[Tuple[Tuple[int, ...], Tuple[int, ...]]] = None
    alibi: bool = False
    sink: bool = False
    layout: str = "bhsd"  # or "bshd"
    scale: Optional[float] = None
    deterministic: bool = False
    seed: int = 0
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    def id(self):
        parts = [f"b{self.b}h{self.hq}/{self.hk}s{self.sq}x{self.skv}d{self.d}/{self.dv}"]
        for flag in ("causal", "alibi", "sink", "dbias", "deterministic"):
            if getattr(self, flag):
                parts.append(flag)
        if self.alignment != "top_left":
            parts.append(self.alignment)
        if self.window:
            parts.append(f"window{self.window}")
        if self.bias:
            parts.append(f"bias{self.bias}")
        if self.seq_lens:
            parts.append("padded")
        if self.layout != "bhsd":
            parts.append(self.layout)
        if self.scale is not None:
            parts.append(f"scale{self.scale}")
        return "-".join(parts)

    def mask(self):
        """(left, right, bottom_right) for the reference."""
        left, right = self.window if self.window else (None, None)
        if self.causal:
            right = 0
        return left, right, self.alignment == "bottom_right"


def arrays(case, dtype=np.float16):
    """Host float64 values (rounded to ``dtype``) of q, k, v, do, bias, sink, seq lens."""
    rng = np.random.default_rng(case.seed)

    def draw(shape, s=1.0):
        return (rng.standard_normal(shape) * s).astype(dtype).astype(np.float64)

    out = {
        "q": draw((case.b, case.hq, case.sq, case.d)),
        "k": draw((case.b, case.hk, case.skv, case.d)),
        "v": draw((case.b, case.hk, case.skv, case.dv)),
        "do": draw((case.b, case.hq, case.sq, case.dv)),
    }
    if case.bias:
        out["bias"] = draw((case.bias[0], case.bias[1], case.sq, case.skv), 0.5)
    if case.sink:
        out["sink"] = rng.standard_normal(case.hq).astype(np.float32).astype(np.float64)
    if case.seq_lens:
        out["seq_q"] = np.array(case.seq_lens[0], dtype=np.int32)
        out["seq_kv"] = np.array(case.seq_lens[1], dtype=np.int32)
    return out


def reference(case, a):
    """Reference o, lse and gradients (dbias reduced like the bias) for ``arrays``."""
    left, right, br = case.mask()
    kw = dict(scale=case.scale, bias=a.get("bias"), left=left, right=right, bottom_right=br,
              seq_q=a.get("seq_q"), seq_kv=a.get("seq_kv"), alibi=case.alibi, sink=a.get("sink"))
    o, lse, _ = ref.forward(a["q"], a["k"], a["v"], **kw)
    return o, lse, kw


def rime_options(case):
    """Keyword options of rime.sdpa / sdpa_backward / attention for the case."""
    kw = dict(causal=case.causal, causal_alignment=case.alignment, window=case.window,
              scale=case.scale, alibi=case.alibi)
    return kw


def check_close(name, actual, expected, tol):
    err = ref.rel_err(actual, expected)
    assert err <= tol, f"{name}: relative error {err:.3g} > {tol:g}"
    return err


def check_stats(actual, expected, tol=2e-3):
    a = np.asarray(actual, np.float64)
    finite = np.isfinite(expected)
    assert np.array_equal(np.isfinite(a), finite), "Stats: +inf rows differ"
    assert np.max(np.abs(a[finite] - expected[finite]), initial=0.0) <= tol
