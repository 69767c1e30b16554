"""The functional API: ``rime.sdpa`` (forward: O and Stats) and ``rime.sdpa_backward``
(dQ, dK, dV, dBias, dSink), on PyTorch tensors (CPU or CUDA) and numpy arrays.

CUDA tensors run on rime's sm120 engine in place, on PyTorch's current stream; CPU tensors
and numpy arrays on the CPU reference engine. Any strides the graph model accepts work (BHSD,
BSHD, slices of a packed QKV, ...); outputs are allocated dense in the dim order of their
twin input. The first call with given shapes, strides, dtypes, options and device builds a
plan (analysis and, on CUDA, kernel compilation); later calls reuse it
(``rime.plan_cache_info()``).
"""

from typing import NamedTuple, Optional, Tuple

from . import _native
from ._errors import TensorError
from ._layout import float32, new_like, new_packed


class Gradients(NamedTuple):
    """What ``sdpa_backward`` returns; ``dbias`` and ``dsink`` are None unless asked for."""

    dq: object
    dk: object
    dv: object
    dbias: Optional[object]
    dsink: Optional[object]


_ALIGNMENTS = ("top_left", "bottom_right")


def mask_bounds(causal, causal_alignment, window):
    """(left_bound, right_bound, bottom_right) of the mask options.

    ``window=(left, right)`` keeps key j for query i when ``i + shift - left < j <= i + shift +
    right`` (``shift`` is 0 top-left, Skv - Sq bottom-right; None: no bound on that side), the
    cuDNN frontend's left and right bounds; ``causal=True`` is ``right = 0``.
    """
    if causal_alignment not in _ALIGNMENTS:
        raise ValueError(
            f"causal_alignment: {causal_alignment!r} is not one of {', '.join(_ALIGNMENTS)}"
        )
    left, right = (None, None) if window is None else tuple(window)
    if causal:
        if right not in (None, 0):
            raise ValueError(f"window: causal=True sets the right bound to 0, window gives {right}")
        right = 0
    return left, right, causal_alignment == "bottom_right"


def _dims(x, name, rank=4):
    shape = getattr(x, "shape", None)
    if shape is None:
        raise TensorError(name, f"is a {type(x).__name__}, not a torch.Tensor or numpy.ndarray")
    if len(shape) != rank:
        raise TensorError(name, f"has {len(shape)} dims {tuple(shape)}; rime takes rank-{rank} (B, H, S, D)")
    return tuple(shape)


def optional_inputs(q, bias, seq_lens, sink):
    """The optional inputs as (argument name, tensor), sequence lengths viewed as (B, 1, 1, 1)
    and the sink as (1, H, 1, 1)."""
    out = []
    if bias is not None:
        _dims(bias, "bias")
        out.append(("bias", bias))
    if seq_lens is not None:
        lens = tuple(seq_lens)
        if len(lens) != 2:
            raise ValueError("seq_lens: give (seq_len_q, seq_len_kv)")
        for name, t in zip(("seq_len_q", "seq_len_kv"), lens):
            out.append((name, t.reshape(q.shape[0], 1, 1, 1)))
    if sink is not None:
        out.append(("sink", sink.reshape(1, q.shape[1], 1, 1)))
    return out


def forward_outputs(q, v, return_stats=True):
    """New (o, stats) for a forward of ``q``, ``v``: o (B, Hq, Sq, Dv) in q's dim order and
    dtype, stats (B, Hq, Sq, 1) float32 row-major (None without ``return_stats``)."""
    b, hq, sq, _ = _dims(q, "q")
    dv = _dims(v, "v")[3]
    o = new_like(q, (b, hq, sq, dv))
    stats = new_packed(q, (b, hq, sq, 1), float32(q)) if return_stats else None
    return o, stats


def backward_outputs(q, k, v, bias=None, dsink=False):
    """New gradients for a backward: dq, dk, dv (and dbias for a given ``bias``) like their
    inputs in dim order and dtype, dsink (1, Hq, 1, 1) float32 when ``dsink``."""
    hq = _dims(q, "q")[1]
    _dims(k, "k")
    _dims(v, "v")
    return Gradients(
        new_like(q, tuple(q.shape)),
        new_like(k, tuple(k.shape)),
        new_like(v, tuple(v.shape)),
        new_like(bias, tuple(bias.shape)) if bias is not None else None,
        new_packed(q, (1, hq, 1, 1), float32(q)) if dsink else None,
    )


def sdpa(
    q,
    k,
    v,
    *,
    scale=None,
    causal=False,
    causal_alignment="top_left",
    window=None,
    bias=None,
    seq_lens=None,
    alibi=False,
    sink=None,
    return_stats=True,
):
    """Scaled dot-product attention forward: ``O = softmax(scale Q K^T + bias, masked) V``.

    q: (B, Hq, Sq, Dqk), k: (B, Hk, Skv, Dqk), v: (B, Hv, Skv, Dv), float16 or bfloat16 (numpy:
    float16), Hq a multiple of Hk and Hv (GQA / MQA). ``scale`` defaults to 1/sqrt(Dqk).
    ``bias``: (1|B, 1|Hq, Sq, Skv), added after scaling. ``seq_lens``: (lengths of q, of k/v),
    int32, B each (padding mask). ``sink``: (Hq,) float32 logits. ``causal``,
    ``causal_alignment``, ``window``: see :func:`mask_bounds`.

    Returns ``(o, stats)`` (stats: (B, Hq, Sq, 1) float32 log-sum-exp, what the backward
    needs), or ``o`` alone with ``return_stats=False``.
    """
    _dims(k, "k")
    left, right, bottom_right = mask_bounds(causal, causal_alignment, window)
    o, stats = forward_outputs(q, v, return_stats)
    outputs = [("o", o)] + ([("stats", stats)] if return_stats else [])
    inputs = [("q", q), ("k", k), ("v", v)] + optional_inputs(q, bias, seq_lens, sink)
    _native.sdpa_call(
        False,
        inputs,
        outputs,
        scale=scale,
        left_bound=left,
        right_bound=right,
        bottom_right=bottom_right,
        alibi=alibi,
    )
    return (o, stats) if return_stats else o


def sdpa_backward(
    q,
    k,
    v,
    o,
    do,
    stats,
    *,
    scale=None,
    causal=False,
    causal_alignment="top_left",
    window=None,
    bias=None,
    dbias=False,
    seq_lens=None,
    alibi=False,
    sink=None,
    dsink=False,
    deterministic=False,
) -> Gradients:
    """The gradients of :func:`sdpa` with respect to q, k, v (and bias, sink).

    ``o`` and ``stats`` are the forward's outputs, ``do`` the gradient of ``o``; the options
    must be the forward's. ``dbias=True`` also returns dBias (shaped like ``bias``, summed over
    its broadcast dims), ``dsink=True`` dSink ((1, Hq, 1, 1) float32). ``deterministic=True``
    makes the gradients bitwise reproducible (on CUDA: the relay or two_kernel route; with a
    broadcast bias and dBias, two_kernel or ordered_dbias, which sum dBias in a fixed order).

    Returns :class:`Gradients` ``(dq, dk, dv, dbias, dsink)``.
    """
    for name, t in (("o", o), ("do", do), ("stats", stats)):
        _dims(t, name)
    left, right, bottom_right = mask_bounds(causal, causal_alignment, window)
    grads = backward_outputs(q, k, v, bias if dbias else None, dsink and sink is not None)
    if dbias and bias is None:
        raise ValueError("dbias: needs a bias")
    if dsink and sink is None:
        raise ValueError("dsink: needs a sink")
    inputs = [("q", q), ("k", k), ("v", v), ("o", o), ("do", do), ("stats", stats)]
    inputs += optional_inputs(q, bias, seq_lens, sink)
    outputs = [(n, t) for n, t in zip(("dq", "dk", "dv", "dbias", "dsink"), grads) if t is not None]
    _native.sdpa_call(
        True,
        inputs,
        outputs,
        scale=scale,
        left_bound=left,
        right_bound=right,
        bottom_right=bottom_right,
        alibi=alibi,
        deterministic=deterministic,
    )
    return grads


def plan_cache_info():
    """Entries, capacity, hits and misses of the functional API's plan cache."""
    return dict(_native.plan_cache_info())


def plan_cache_clear():
    """Drops every cached plan (the kernel cache on disk stays)."""
    _native.plan_cache_clear()


def set_plan_cache_capacity(n):
    """Keeps at most ``n`` plans (least recently used dropped first); the default is 256."""
    _native.set_plan_cache_capacity(int(n))
