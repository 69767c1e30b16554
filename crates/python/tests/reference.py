"""An independent float64 reference of SDPA forward and backward (docs/sdpa-backward.md,
sections 1 and 2), written directly from the math with numpy: no rime code.

Shapes: q (B, Hq, Sq, D), k (B, Hk, Skv, D), v (B, Hk, Skv, Dv); bias (1|B, 1|Hq, Sq, Skv);
seq_q, seq_kv: per-batch lengths; sink: (Hq,) logits in the softmax denominator.
"""

import numpy as np


def _expand_heads(x, hq):
    return np.repeat(x, hq // x.shape[1], axis=1)


def _fold_heads(x, hk):
    b, hq, s, d = x.shape
    return x.reshape(b, hk, hq // hk, s, d).sum(axis=2)


def _keep(b, sq, skv, left, right, bottom_right, seq_q, seq_kv):
    """(B, 1, Sq, Skv) boolean mask of kept (query i, key j) pairs."""
    i = np.arange(sq)[:, None]
    j = np.arange(skv)[None, :]
    out = np.zeros((b, 1, sq, skv), dtype=bool)
    for n in range(b):
        ql = sq if seq_q is None else min(int(seq_q[n]), sq)
        kl = skv if seq_kv is None else min(int(seq_kv[n]), skv)
        shift = kl - ql if bottom_right else 0
        keep = (i < ql) & (j < kl)
        if right is not None:
            keep &= j <= i + shift + right
        if left is not None:
            keep &= j > i + shift - left
        out[n, 0] = keep
    return out


def _scores(q, k, scale, bias, left, right, bottom_right, seq_q, seq_kv, alibi):
    b, hq, sq, d = q.shape
    skv = k.shape[2]
    scale = 1.0 / np.sqrt(d) if scale is None else scale
    s = scale * np.einsum("bhid,bhjd->bhij", q, _expand_heads(k, hq))
    if bias is not None:
        s = s + bias
    if alibi:
        slopes = 2.0 ** (-8.0 * (np.arange(hq) + 1) / hq)  # Hq a power of two
        s = s + slopes[None, :, None, None] * (np.arange(skv)[None, :] - np.arange(sq)[:, None])
    keep = _keep(b, sq, skv, left, right, bottom_right, seq_q, seq_kv)
    return scale, np.where(keep, s, -np.inf), keep


def forward(q, k, v, *, scale=None, bias=None, left=None, right=None, bottom_right=False,
            seq_q=None, seq_kv=None, alibi=False, sink=None):
    """(o, lse, p): output, natural-log log-sum-exp (B, Hq, Sq, 1), probabilities."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    hq = q.shape[1]
    _, s, keep = _scores(q, k, scale, bias, left, right, bottom_right, seq_q, seq_kv, alibi)
    m = np.max(s, axis=-1, keepdims=True)
    if sink is not None:
        m = np.maximum(m, np.asarray(sink, np.float64).reshape(1, hq, 1, 1))
    m = np.where(np.isfinite(m), m, 0.0)
    total = np.sum(np.where(keep, np.exp(s - m), 0.0), axis=-1, keepdims=True)
    if sink is not None:
        total = total + np.exp(np.asarray(sink, np.float64).reshape(1, hq, 1, 1) - m)
    with np.errstate(divide="ignore"):
        lse = np.where(total > 0, m + np.log(total), np.inf)
    p = np.where(keep, np.exp(s - lse), 0.0)
    o = np.einsum("bhij,bhjd->bhid", p, _expand_heads(np.asarray(v, np.float64), hq))
    return o, lse, p


def backward(q, k, v, o, do, *, scale=None, bias=None, left=None, right=None,
             bottom_right=False, seq_q=None, seq_kv=None, alibi=False, sink=None):
    """dq, dk, dv, dbias (full (B, Hq, Sq, Skv), sum it over broadcast dims), dsink (Hq,)."""
    q, k, v, o, do = (np.asarray(x, dtype=np.float64) for x in (q, k, v, o, do))
    hq, hk = q.shape[1], k.shape[1]
    scale_v, _, _ = _scores(q, k, scale, bias, left, right, bottom_right, seq_q, seq_kv, alibi)
    _, lse, p = forward(q, k, v, scale=scale, bias=bias, left=left, right=right,
                        bottom_right=bottom_right, seq_q=seq_q, seq_kv=seq_kv, alibi=alibi,
                        sink=sink)
    dv = _fold_heads(np.einsum("bhij,bhid->bhjd", p, do), hk)
    dp = np.einsum("bhid,bhjd->bhij", do, _expand_heads(v, hq))
    delta = np.sum(do * o, axis=-1, keepdims=True)
    ds = p * (dp - delta)
    dq = scale_v * np.einsum("bhij,bhjd->bhid", ds, _expand_heads(k, hq))
    dk = _fold_heads(scale_v * np.einsum("bhij,bhid->bhjd", ds, q), hk)
    dsink = None
    if sink is not None:
        w = np.exp(np.asarray(sink, np.float64).reshape(1, hq, 1, 1) - lse)
        dsink = -np.sum(np.where(np.isfinite(lse), w * delta, 0.0), axis=(0, 2, 3))
    return dq, dk, dv, ds, dsink


def reduce_like(full, shape):
    """Sums a (B, H, S, S) gradient over the dims where ``shape`` is 1."""
    axes = tuple(i for i, (a, b) in enumerate(zip(full.shape, shape)) if b == 1 and a != 1)
    return full.sum(axis=axes, keepdims=True) if axes else full


def rel_err(actual, expected):
    """||actual - expected|| / ||expected|| (0 when both are 0)."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    den = np.linalg.norm(e)
    num = np.linalg.norm(a - e)
    return num / den if den > 0 else num
