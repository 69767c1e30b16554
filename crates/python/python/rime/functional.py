"""The functional API: ``rime.sdpa`` (forward: O and Stats) and ``rime.sdpa_backward``
(dQ, dK, dV, dBias, dSink), on PyTorch tensors (CPU or CUDA) and numpy arrays.

CUDA tensors run on rime's sm120 engine in place, on PyTorch's current stream; CPU tensors
and numpy arrays on the CPU reference engine. Any strides the graph model accepts work (BHSD,
BSHD, slices of a packed QKV, ...); outputs are allocated dense in the dim order of their
twin input. The first call with given shapes, strides, dtypes, options and device builds a
plan (analysis and, on CUDA, kernel compilation); later calls reuse it
(``rime.plan_cache_info()``).
"""

import re
from typing import NamedTuple, Optional, Tuple

from . import _native
from ._errors import RimeError, TensorError
from ._layout import element_strides, float32, is_torch, new_like, new_packed


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
        what = {4: "(B, H, S, D)", 3: "(tokens, heads, head dim), packed", 2: "(tokens, heads)"}
        raise TensorError(
            name, f"has {len(shape)} dims {tuple(shape)}; rime takes rank-{rank} {what[rank]}"
        )
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


def _int64(x):
    if is_torch(x):
        import torch

        return x.to(torch.int64)
    return x.astype("int64")


def _span(x):
    """Elements from ``x``'s first to its last (1 + sum((dim - 1) x stride))."""
    return 1 + sum((n - 1) * s for n, s in zip(x.shape, element_strides(x)))


def _cu_seqlens(cu, name, q):
    """``cu`` checked: int32, rank 1, B + 1 >= 2 entries, on ``q``'s framework (the engine
    checks the values: non-decreasing, within the tensors)."""
    shape = getattr(cu, "shape", None)
    if shape is None or len(shape) != 1 or shape[0] < 2:
        raise TensorError(name, f"has shape {shape}; cu_seqlens is (B + 1,), B >= 1")
    if str(cu.dtype).rsplit(".", 1)[-1] != "int32":
        raise TensorError(name, f"is {cu.dtype}; cu_seqlens is int32 (as in FlashAttention)")
    if is_torch(cu) != is_torch(q):
        raise TensorError(name, "must come from the same framework as q")
    return cu


def _packed(name, x, cu):
    """(name, x) and (name_offsets, the element where each sequence of packed ``x`` starts):
    ``cu`` x its token stride, each at most its span. The end of the last token, cu[B] x the
    stride, lies past the span when the token stride is wider than a token (a slice of a packed
    QKV), and every offset must be inside the buffer. Stats (T, H) goes as (T, H, 1)."""
    stats = name == "stats"
    _dims(x, name, 2 if stats else 3)
    offsets = (_int64(cu) * element_strides(x)[0]).clip(max=_span(x)).reshape(-1, 1, 1, 1)
    if stats:
        x = x.reshape(x.shape[0], x.shape[1], 1)
    return (name, x), (name + "_offsets", offsets)


def _packed_inputs(*packed):
    """Each packed (name, x, cu) input, and its offsets."""
    return [pair for p in packed for pair in _packed(*p)]


def _packed_outputs(*packed):
    """The packed (name, x, cu) outputs, and their offsets, which are inputs of the plan."""
    pairs = [_packed(*p) for p in packed]
    return [tensor for tensor, _ in pairs], [offsets for _, offsets in pairs]


def _bucket(tokens, cap):
    """``max_total_seq_len``: the tokens rounded up to a power of two (at most ``cap``, the
    padded B x S), so that plans are cached per bucket, not per token count."""
    n = 1
    while n < tokens:
        n *= 2
    return max(tokens, min(n, cap))


def varlen_forward_outputs(q, v, return_stats=True):
    """New (o, stats) for a varlen forward: o (Tq, Hq, Dv) packed THD (row-major) in q's
    dtype, stats (Tq, Hq) float32 (None without ``return_stats``). Packed whatever q's order:
    a ragged tensor's tokens must be its outermost dim."""
    tq, hq, _ = _dims(q, "q", 3)
    dv = _dims(v, "v", 3)[2]
    stats = new_packed(q, (tq, hq), float32(q)) if return_stats else None
    return new_packed(q, (tq, hq, dv), q.dtype), stats


def varlen_backward_outputs(q, k, v, bias=None, dsink=False):
    """New gradients for a varlen backward: dq, dk, dv packed THD (row-major) of q's, k's and
    v's shapes and dtypes; dbias like a given ``bias``; dsink (1, Hq, 1, 1) float32 when
    ``dsink``."""
    hq = _dims(q, "q", 3)[1]
    return Gradients(
        new_packed(q, tuple(q.shape), q.dtype),
        new_packed(q, tuple(_dims(k, "k", 3)), k.dtype),
        new_packed(q, tuple(_dims(v, "v", 3)), v.dtype),
        new_like(bias, tuple(_dims(bias, "bias"))) if bias is not None else None,
        new_packed(q, (1, hq, 1, 1), float32(q)) if dsink else None,
    )


def _varlen_options(q, k, cu_seqlens_q, cu_seqlens_kv, max_seqlen_q, max_seqlen_kv, causal,
                    causal_alignment, window):
    """The checked cu_seqlens of a varlen call (both giving the same number of sequences) and
    the native call's options: the mask bounds, the longest sequences and the token buckets."""
    cu_q = _cu_seqlens(cu_seqlens_q, "cu_seqlens_q", q)
    cu_kv = _cu_seqlens(cu_seqlens_kv, "cu_seqlens_kv", q)
    _dims(q, "q", 3)
    _dims(k, "k", 3)
    batch = cu_q.shape[0] - 1
    if cu_kv.shape[0] - 1 != batch:
        raise ValueError(
            f"cu_seqlens_kv: {cu_kv.shape[0] - 1} sequences, cu_seqlens_q has {batch}"
        )
    max_q, max_kv = int(max_seqlen_q), int(max_seqlen_kv)
    left, right, bottom_right = mask_bounds(causal, causal_alignment, window)
    return cu_q, cu_kv, dict(
        left_bound=left,
        right_bound=right,
        bottom_right=bottom_right,
        max_seqlen_q=max_q,
        max_seqlen_kv=max_kv,
        max_total_q=_bucket(q.shape[0], batch * max_q),
        max_total_kv=_bucket(k.shape[0], batch * max_kv),
    )


def _seq_lens(cu_q, cu_kv):
    batch = cu_q.shape[0] - 1
    return [
        ("seq_len_q", (cu_q[1:] - cu_q[:-1]).reshape(batch, 1, 1, 1)),
        ("seq_len_kv", (cu_kv[1:] - cu_kv[:-1]).reshape(batch, 1, 1, 1)),
    ]


# The tensors the varlen functions derive from cu_seqlens_*, by the sequence they follow.
_DERIVED = re.compile(r"\b(seq_len_(q|kv)|(q|k|v|o|do|stats|dq|dk|dv)_offsets)\b")
_KV_TOKENS = ("k", "v", "dk", "dv")


def _varlen_call(*args, **options):
    """``_native.sdpa_call``, with an error about a tensor the varlen functions derive from
    ``cu_seqlens_*`` (lengths, offsets) saying which argument it came from."""
    try:
        _native.sdpa_call(*args, **options)
    except RimeError as e:
        text = str(e)
        found = _DERIVED.search(text)
        if found:
            kv = found.group(2) == "kv" or found.group(3) in _KV_TOKENS
            given = "cu_seqlens_kv" if kv else "cu_seqlens_q"
            e.args = (f"{text} ({found.group(1)} is derived from {given})",) + e.args[1:]
        raise


def sdpa_varlen(
    q,
    k,
    v,
    cu_seqlens_q,
    cu_seqlens_kv,
    max_seqlen_q,
    max_seqlen_kv,
    *,
    scale=None,
    causal=False,
    causal_alignment="top_left",
    window=None,
    bias=None,
    sink=None,
    return_stats=True,
):
    """:func:`sdpa` on packed variable-length sequences (THD, FlashAttention's varlen layout),
    without padding them: q (Tq, Hq, Dqk), k (Tkv, Hk, Dqk), v (Tkv, Hv, Dv), where sequence b
    holds tokens ``cu_seqlens_q[b]:cu_seqlens_q[b + 1]`` of q (of k and v:
    ``cu_seqlens_kv``); ``cu_seqlens_*`` int32 (B + 1,) on q's device; ``max_seqlen_*`` the
    longest sequence. Masks (causal, window) apply per sequence. ``bias``: dense (1|B, 1|Hq,
    max_seqlen_q, max_seqlen_kv), element (b, h, i, j) added to query i and key j of sequence
    b. Tokens outside every sequence are neither read nor written.

    Returns ``(o, stats)``: o (Tq, Hq, Dv) packed (row-major), stats (Tq, Hq) float32, or ``o``
    alone with ``return_stats=False``.
    """
    cu_q, cu_kv, options = _varlen_options(q, k, cu_seqlens_q, cu_seqlens_kv, max_seqlen_q,
                                           max_seqlen_kv, causal, causal_alignment, window)
    o, stats = varlen_forward_outputs(q, v, return_stats)
    inputs = _packed_inputs(("q", q, cu_q), ("k", k, cu_kv), ("v", v, cu_kv))
    inputs += _seq_lens(cu_q, cu_kv) + optional_inputs(q, bias, None, sink)
    written = [("o", o, cu_q)] + ([("stats", stats, cu_q)] if return_stats else [])
    outputs, offsets = _packed_outputs(*written)
    _varlen_call(False, inputs + offsets, outputs, scale=scale, **options)
    return (o, stats) if return_stats else o


def sdpa_varlen_backward(
    q,
    k,
    v,
    o,
    do,
    stats,
    cu_seqlens_q,
    cu_seqlens_kv,
    max_seqlen_q,
    max_seqlen_kv,
    *,
    scale=None,
    causal=False,
    causal_alignment="top_left",
    window=None,
    bias=None,
    dbias=False,
    sink=None,
    dsink=False,
    deterministic=False,
) -> Gradients:
    """The gradients of :func:`sdpa_varlen` with respect to q, k, v (and the bias, the sink):
    ``o`` and ``stats`` are its outputs, ``do`` (Tq, Hq, Dv) the gradient of ``o``, the other
    arguments the forward's. Returns :class:`Gradients` with dq, dk, dv shaped like q, k, v,
    dbias like ``bias`` (summed over its broadcast dims) when ``dbias``; tokens outside every
    sequence are not written.
    """
    cu_q, cu_kv, options = _varlen_options(q, k, cu_seqlens_q, cu_seqlens_kv, max_seqlen_q,
                                           max_seqlen_kv, causal, causal_alignment, window)
    if dsink and sink is None:
        raise ValueError("dsink: needs a sink")
    if dbias and bias is None:
        raise ValueError("dbias: needs a bias")
    grads = varlen_backward_outputs(q, k, v, bias if dbias else None, dsink)
    inputs = _packed_inputs(("q", q, cu_q), ("k", k, cu_kv), ("v", v, cu_kv), ("o", o, cu_q),
                            ("do", do, cu_q), ("stats", stats, cu_q))
    inputs += _seq_lens(cu_q, cu_kv) + optional_inputs(q, bias, None, sink)
    outputs, offsets = _packed_outputs(("dq", grads.dq, cu_q), ("dk", grads.dk, cu_kv),
                                       ("dv", grads.dv, cu_kv))
    outputs += [(n, t) for n, t in (("dbias", grads.dbias), ("dsink", grads.dsink))
                if t is not None]
    _varlen_call(True, inputs + offsets, outputs, scale=scale, deterministic=deterministic,
                 **options)
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
