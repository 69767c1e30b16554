"""Differentiable attention on rime's engines: ``rime.attention`` and, on packed
variable-length sequences, ``rime.attention_varlen`` (custom ops
``rime::attention_varlen_forward`` / ``_backward``, built the same way).

Two ``torch.library`` custom ops, ``rime::attention_forward`` (O and Stats) and
``rime::attention_backward`` (dQ, dK, dV, dBias, dSink), with fake implementations (the same output
allocation as the real ones, so shapes and strides agree) and ``register_autograd``:
``torch.compile`` traces ``rime.attention`` as one opaque node, with no graph break, and
autograd runs rime's backward. ``rime.AttentionFunction`` is the same as a
``torch.autograd.Function``, for eager use.
"""

from typing import Optional, Tuple

import torch
from torch import Tensor

from . import functional as F


def _seq_lens(seq_len_q, seq_len_kv):
    return None if seq_len_q is None else (seq_len_q, seq_len_kv)


def _forward(q, k, v, bias, sink, seq_len_q, seq_len_kv, scale, left_bound, right_bound,
             bottom_right, alibi):
    return F.sdpa(
        q,
        k,
        v,
        scale=scale,
        window=(left_bound, right_bound),
        causal_alignment="bottom_right" if bottom_right else "top_left",
        bias=bias,
        seq_lens=_seq_lens(seq_len_q, seq_len_kv),
        alibi=alibi,
        sink=sink,
    )


def _backward(
    do, q, k, v, o, stats, bias, sink, seq_len_q, seq_len_kv, scale, left_bound, right_bound,
    bottom_right, alibi, dbias, dsink, deterministic,
):
    return F.sdpa_backward(
        q,
        k,
        v,
        o,
        do,
        stats,
        scale=scale,
        window=(left_bound, right_bound),
        causal_alignment="bottom_right" if bottom_right else "top_left",
        bias=bias,
        dbias=dbias,
        seq_lens=_seq_lens(seq_len_q, seq_len_kv),
        alibi=alibi,
        sink=sink,
        dsink=dsink,
        deterministic=deterministic,
    )


def _usable_grad(do):
    """The incoming gradient of O in a layout rime takes: a contiguous copy when its last dim
    is strided or it is broadcast (``o.sum().backward()`` gives stride 0)."""
    if do.stride(-1) != 1 or 0 in do.stride():
        return do.contiguous()
    return do


def _no_dbias(q):
    # A custom op returns tensors, not None: an empty one stands for "no dBias" (or dSink).
    return q.new_empty((0,))


def _sink_grad(dsink, sink, wanted):
    # rime returns dSink as (1, Hq, 1, 1) float32; autograd wants the sink's own shape.
    return dsink.reshape(sink.shape) if wanted else None


_HAS_CUSTOM_OPS = hasattr(torch.library, "custom_op") and hasattr(torch.library, "register_autograd")

if _HAS_CUSTOM_OPS:

    @torch.library.custom_op("rime::attention_forward", mutates_args=())
    def attention_forward(
        q: Tensor,
        k: Tensor,
        v: Tensor,
        bias: Optional[Tensor],
        sink: Optional[Tensor],
        seq_len_q: Optional[Tensor],
        seq_len_kv: Optional[Tensor],
        scale: Optional[float],
        left_bound: Optional[int],
        right_bound: Optional[int],
        bottom_right: bool,
        alibi: bool,
        deterministic: bool,
    ) -> Tuple[Tensor, Tensor]:
        """O and Stats of the attention (``deterministic`` is the backward's)."""
        return _forward(q, k, v, bias, sink, seq_len_q, seq_len_kv, scale, left_bound,
                        right_bound, bottom_right, alibi)

    @attention_forward.register_fake
    def _attention_forward_fake(q, k, v, *_):
        return F.forward_outputs(q, v)

    @torch.library.custom_op("rime::attention_backward", mutates_args=())
    def attention_backward(
        do: Tensor,
        q: Tensor,
        k: Tensor,
        v: Tensor,
        o: Tensor,
        stats: Tensor,
        bias: Optional[Tensor],
        sink: Optional[Tensor],
        seq_len_q: Optional[Tensor],
        seq_len_kv: Optional[Tensor],
        scale: Optional[float],
        left_bound: Optional[int],
        right_bound: Optional[int],
        bottom_right: bool,
        alibi: bool,
        dbias: bool,
        dsink: bool,
        deterministic: bool,
    ) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
        """dQ, dK, dV, dBias (empty unless ``dbias``) and dSink ((1, Hq, 1, 1) float32, empty
        unless ``dsink``)."""
        g = _backward(
            do, q, k, v, o, stats, bias, sink, seq_len_q, seq_len_kv, scale, left_bound,
            right_bound, bottom_right, alibi, dbias, dsink, deterministic,
        )
        return (g.dq, g.dk, g.dv, g.dbias if g.dbias is not None else _no_dbias(q),
                g.dsink if g.dsink is not None else _no_dbias(q))

    @attention_backward.register_fake
    def _attention_backward_fake(do, q, k, v, o, stats, bias, sink, *rest):
        dbias, dsink = rest[-3], rest[-2]
        g = F.backward_outputs(q, k, v, bias if dbias else None, dsink and sink is not None)
        return (g.dq, g.dk, g.dv, g.dbias if g.dbias is not None else _no_dbias(q),
                g.dsink if g.dsink is not None else _no_dbias(q))

    def _setup_context(ctx, inputs, output):
        q, k, v, bias, sink, seq_len_q, seq_len_kv = inputs[:7]
        ctx.options = tuple(inputs[7:12])
        ctx.deterministic = inputs[12]
        o, stats = output
        ctx.save_for_backward(q, k, v, o, stats, bias, sink, seq_len_q, seq_len_kv)
        ctx.mark_non_differentiable(stats)

    def _custom_op_backward(ctx, do, _dstats):
        q, k, v, o, stats, bias, sink, seq_len_q, seq_len_kv = ctx.saved_tensors
        want_dbias = bias is not None and ctx.needs_input_grad[3]
        want_dsink = sink is not None and ctx.needs_input_grad[4]
        dq, dk, dv, dbias, dsink = torch.ops.rime.attention_backward(
            _usable_grad(do), q, k, v, o, stats, bias, sink, seq_len_q, seq_len_kv,
            *ctx.options, want_dbias, want_dsink, ctx.deterministic,
        )
        return (dq, dk, dv, dbias if want_dbias else None,
                _sink_grad(dsink, sink, want_dsink)) + (None,) * 8

    torch.library.register_autograd(
        "rime::attention_forward", _custom_op_backward, setup_context=_setup_context
    )


def _varlen_forward(q, k, v, cu_q, cu_kv, max_q, max_kv, bias, sink, scale, left_bound,
                    right_bound, bottom_right):
    return F.sdpa_varlen(
        q, k, v, cu_q, cu_kv, max_q, max_kv, scale=scale, window=(left_bound, right_bound),
        causal_alignment="bottom_right" if bottom_right else "top_left", bias=bias, sink=sink,
    )


def _varlen_backward(do, q, k, v, o, stats, cu_q, cu_kv, max_q, max_kv, bias, sink, scale,
                     left_bound, right_bound, bottom_right, dbias, dsink, deterministic):
    return F.sdpa_varlen_backward(
        q, k, v, o, do, stats, cu_q, cu_kv, max_q, max_kv, scale=scale,
        window=(left_bound, right_bound),
        causal_alignment="bottom_right" if bottom_right else "top_left",
        bias=bias, dbias=dbias, sink=sink, dsink=dsink, deterministic=deterministic,
    )


if _HAS_CUSTOM_OPS:

    @torch.library.custom_op("rime::attention_varlen_forward", mutates_args=())
    def attention_varlen_forward(
        q: Tensor,
        k: Tensor,
        v: Tensor,
        cu_seqlens_q: Tensor,
        cu_seqlens_kv: Tensor,
        max_seqlen_q: int,
        max_seqlen_kv: int,
        bias: Optional[Tensor],
        sink: Optional[Tensor],
        scale: Optional[float],
        left_bound: Optional[int],
        right_bound: Optional[int],
        bottom_right: bool,
        deterministic: bool,
    ) -> Tuple[Tensor, Tensor]:
        """O and Stats of packed variable-length attention (``deterministic`` is the
        backward's)."""
        return _varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_kv, max_seqlen_q,
                               max_seqlen_kv, bias, sink, scale, left_bound, right_bound,
                               bottom_right)

    @attention_varlen_forward.register_fake
    def _attention_varlen_forward_fake(q, k, v, *_):
        return F.varlen_forward_outputs(q, v)

    @torch.library.custom_op("rime::attention_varlen_backward", mutates_args=())
    def attention_varlen_backward(
        do: Tensor,
        q: Tensor,
        k: Tensor,
        v: Tensor,
        o: Tensor,
        stats: Tensor,
        cu_seqlens_q: Tensor,
        cu_seqlens_kv: Tensor,
        max_seqlen_q: int,
        max_seqlen_kv: int,
        bias: Optional[Tensor],
        sink: Optional[Tensor],
        scale: Optional[float],
        left_bound: Optional[int],
        right_bound: Optional[int],
        bottom_right: bool,
        dbias: bool,
        dsink: bool,
        deterministic: bool,
    ) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
        """dQ, dK, dV, dBias (empty unless ``dbias``) and dSink ((1, Hq, 1, 1) float32, empty
        unless ``dsink``) of packed variable-length attention."""
        g = _varlen_backward(do, q, k, v, o, stats, cu_seqlens_q, cu_seqlens_kv, max_seqlen_q,
                             max_seqlen_kv, bias, sink, scale, left_bound, right_bound,
                             bottom_right, dbias, dsink, deterministic)
        return (g.dq, g.dk, g.dv, g.dbias if g.dbias is not None else _no_dbias(q),
                g.dsink if g.dsink is not None else _no_dbias(q))

    @attention_varlen_backward.register_fake
    def _attention_varlen_backward_fake(do, q, k, v, o, stats, cu_q, cu_kv, max_q, max_kv, bias,
                                        sink, *rest):
        dbias, dsink = rest[-3], rest[-2]
        g = F.varlen_backward_outputs(q, k, v, bias if dbias else None,
                                      dsink and sink is not None)
        return (g.dq, g.dk, g.dv, g.dbias if g.dbias is not None else _no_dbias(q),
                g.dsink if g.dsink is not None else _no_dbias(q))

    def _varlen_setup_context(ctx, inputs, output):
        q, k, v, cu_q, cu_kv = inputs[:5]
        ctx.sizes = tuple(inputs[5:7])
        bias, sink = inputs[7:9]
        ctx.options = tuple(inputs[9:13])
        ctx.deterministic = inputs[13]
        o, stats = output
        ctx.save_for_backward(q, k, v, o, stats, cu_q, cu_kv, bias, sink)
        ctx.mark_non_differentiable(stats)

    def _varlen_custom_op_backward(ctx, do, _dstats):
        q, k, v, o, stats, cu_q, cu_kv, bias, sink = ctx.saved_tensors
        want_dbias = bias is not None and ctx.needs_input_grad[7]
        want_dsink = sink is not None and ctx.needs_input_grad[8]
        dq, dk, dv, dbias, dsink = torch.ops.rime.attention_varlen_backward(
            _usable_grad(do), q, k, v, o, stats, cu_q, cu_kv, *ctx.sizes, bias, sink,
            *ctx.options, want_dbias, want_dsink, ctx.deterministic,
        )
        return ((dq, dk, dv, None, None, None, None, dbias if want_dbias else None,
                 _sink_grad(dsink, sink, want_dsink)) + (None,) * 5)

    torch.library.register_autograd(
        "rime::attention_varlen_forward", _varlen_custom_op_backward,
        setup_context=_varlen_setup_context,
    )


class AttentionVarlenFunction(torch.autograd.Function):
    """:func:`attention_varlen` as a ``torch.autograd.Function`` (eager). ``apply(q, k, v,
    cu_seqlens_q, cu_seqlens_kv, max_seqlen_q, max_seqlen_kv, bias, sink, scale, left_bound,
    right_bound, bottom_right, deterministic)`` returns O."""

    @staticmethod
    def forward(ctx, q, k, v, cu_q, cu_kv, max_q, max_kv, bias, sink, scale, left_bound,
                right_bound, bottom_right, deterministic):
        o, stats = _varlen_forward(q, k, v, cu_q, cu_kv, max_q, max_kv, bias, sink, scale,
                                   left_bound, right_bound, bottom_right)
        ctx.sizes = (max_q, max_kv)
        ctx.options = (scale, left_bound, right_bound, bottom_right)
        ctx.deterministic = deterministic
        ctx.save_for_backward(q, k, v, o, stats, cu_q, cu_kv, bias, sink)
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, stats, cu_q, cu_kv, bias, sink = ctx.saved_tensors
        want_dbias = bias is not None and ctx.needs_input_grad[7]
        want_dsink = sink is not None and ctx.needs_input_grad[8]
        g = _varlen_backward(_usable_grad(do), q, k, v, o, stats, cu_q, cu_kv, *ctx.sizes, bias,
                             sink, *ctx.options, want_dbias, want_dsink, ctx.deterministic)
        return ((g.dq, g.dk, g.dv, None, None, None, None, g.dbias,
                 _sink_grad(g.dsink, sink, want_dsink)) + (None,) * 5)


def attention_varlen(
    q,
    k,
    v,
    cu_seqlens_q,
    cu_seqlens_kv,
    max_seqlen_q,
    max_seqlen_kv,
    *,
    bias=None,
    sink=None,
    causal=False,
    causal_alignment="top_left",
    window=None,
    scale=None,
    deterministic=False,
):
    """Differentiable attention on packed variable-length sequences (FlashAttention's varlen
    layout); returns O (Tq, Hq, Dv). Arguments as :func:`rime.sdpa_varlen`; gradients flow to
    q, k and v (slices of one packed QKV included), to a bias that requires grad (dBias
    summed over its broadcast dims) and to a sink ((Hq,) float32 logits) that requires grad.
    Works under ``torch.compile``."""
    left, right, bottom_right = F.mask_bounds(causal, causal_alignment, window)
    args = (q, k, v, cu_seqlens_q, cu_seqlens_kv, int(max_seqlen_q), int(max_seqlen_kv), bias,
            sink, scale, left, right, bottom_right, deterministic)
    if _HAS_CUSTOM_OPS:
        o, _ = torch.ops.rime.attention_varlen_forward(*args)
        return o
    return AttentionVarlenFunction.apply(*args)


class AttentionFunction(torch.autograd.Function):
    """Attention as a ``torch.autograd.Function`` (eager; ``rime.attention`` uses the custom
    ops, which ``torch.compile`` traces). ``apply(q, k, v, bias, sink, seq_len_q, seq_len_kv,
    scale, left_bound, right_bound, bottom_right, alibi, deterministic)`` returns O."""

    @staticmethod
    def forward(ctx, q, k, v, bias, sink, seq_len_q, seq_len_kv, scale, left_bound, right_bound,
                bottom_right, alibi, deterministic):
        o, stats = _forward(q, k, v, bias, sink, seq_len_q, seq_len_kv, scale, left_bound,
                            right_bound, bottom_right, alibi)
        ctx.options = (scale, left_bound, right_bound, bottom_right, alibi)
        ctx.deterministic = deterministic
        ctx.save_for_backward(q, k, v, o, stats, bias, sink, seq_len_q, seq_len_kv)
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, stats, bias, sink, seq_len_q, seq_len_kv = ctx.saved_tensors
        want_dbias = bias is not None and ctx.needs_input_grad[3]
        want_dsink = sink is not None and ctx.needs_input_grad[4]
        g = _backward(
            _usable_grad(do), q, k, v, o, stats, bias, sink, seq_len_q, seq_len_kv,
            *ctx.options, want_dbias, want_dsink, ctx.deterministic,
        )
        return (g.dq, g.dk, g.dv, g.dbias, _sink_grad(g.dsink, sink, want_dsink)) + (None,) * 8


def attention(
    q,
    k,
    v,
    *,
    bias=None,
    sink=None,
    causal=False,
    causal_alignment="top_left",
    window=None,
    seq_lens=None,
    scale=None,
    alibi=False,
    deterministic=False,
):
    """Differentiable scaled dot-product attention on rime's engines; returns O.

    Arguments as :func:`rime.sdpa`; ``deterministic=True`` makes the backward bitwise
    reproducible. Gradients flow to q, k, v, a bias that requires grad (dBias summed over the
    bias's broadcast dims) and a sink ((Hq,) float32 logits, as gpt-oss learns them) that
    requires grad. Works under ``torch.compile(fullgraph=True)``.
    """
    left, right, bottom_right = F.mask_bounds(causal, causal_alignment, window)
    seq_len_q, seq_len_kv = (None, None) if seq_lens is None else tuple(seq_lens)
    args = (q, k, v, bias, sink, seq_len_q, seq_len_kv, scale, left, right, bottom_right, alibi,
            deterministic)
    if _HAS_CUSTOM_OPS:
        o, _ = torch.ops.rime.attention_forward(*args)
        return o
    return AttentionFunction.apply(*args)
