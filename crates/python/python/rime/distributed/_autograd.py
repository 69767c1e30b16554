"""``rime.distributed.attention``: the ring forward and backward as a
``torch.autograd.Function``, called like ``rime.attention`` plus ``group`` and ``layout``."""

import torch

from ..autograd import _usable_grad
from . import _attention
from ._problem import unsupported


class AttentionFunction(torch.autograd.Function):
    """``apply(q, k, v, bias, options, deterministic)`` returns this rank's rows of O;
    ``options`` is the keyword dict of :func:`rime.distributed.sdpa` (group, layout, scale,
    causal, causal_alignment, window)."""

    @staticmethod
    def forward(ctx, q, k, v, bias, options, deterministic):
        o, stats = _attention.sdpa(q, k, v, bias=bias, **options)
        ctx.options = options
        ctx.deterministic = deterministic
        ctx.save_for_backward(q, k, v, o, stats, bias)
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, stats, bias = ctx.saved_tensors
        want_dbias = bias is not None and ctx.needs_input_grad[3]
        g = _attention.sdpa_backward(
            q, k, v, o, _usable_grad(do), stats, bias=bias, dbias=want_dbias,
            deterministic=ctx.deterministic, **ctx.options,
        )
        return g.dq, g.dk, g.dv, g.dbias, None, None


def attention(
    q,
    k,
    v,
    *,
    bias=None,
    causal=False,
    causal_alignment="top_left",
    window=None,
    seq_lens=None,
    scale=None,
    alibi=False,
    deterministic=False,
    group=None,
    layout="zigzag",
):
    """Differentiable context-parallel attention: this rank's rows of O.

    The arguments of :func:`rime.attention`, on this rank's shards (see
    :func:`rime.distributed.sdpa`), plus the process ``group`` (None: the default group) and the
    sharding ``layout`` ("zigzag" or "contiguous", as given to ``shard``). Gradients flow to
    the shards of q, k, v and to a bias that requires grad (this rank's rows of dBias). Every
    rank of the group must call it, with shards of the same shapes, and run the backward.
    ``seq_lens`` and ``alibi`` are not supported (ValueError). Eager only (the ring's messages
    are not traced by ``torch.compile``).
    """
    unsupported(seq_lens, alibi)
    options = dict(group=group, layout=layout, scale=scale, causal=causal,
                   causal_alignment=causal_alignment, window=window)
    return AttentionFunction.apply(q, k, v, bias, options, deterministic)
