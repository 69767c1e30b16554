"""The ring algorithms: attention forward and backward over a process group with q, k, v
sharded along the sequence (docs/distributed.md).

Forward: each rank keeps its queries; the key / value shards travel once around the ring. At
step t a rank holds the shard of rank ``rank - t``; it posts the shift of that shard to the
next rank *before* computing on it, so the transfer overlaps the block calls. The blocks'
outputs are merged by their log-sum-exp (``_merge``).

Backward: with the global O and Stats of the forward (so each block's P = exp(S - Stats) and
delta = rowsum(dO * O) are the global ones), every (query shard, key shard) block is one rime
backward call, whose dQ adds to the local dQ and whose dK, dV add to an accumulator that
travels with the key / value shard. After W steps each accumulator has visited every rank and
one more shift brings it to its owner. Sums are float32, in ring order.
"""

import torch

from .. import functional as F
from . import _merge
from ._problem import Options, Problem
from ._ring import DKV, KV, pack, unpack
from ._sharding import put, take


def _rows(x, call):
    return x[:, :, call.rows[0]:call.rows[1]]


def _cols(x, call):
    return x[:, :, call.cols[0]:call.cols[1]]


def _bias_block(bias, call):
    """The bias of a block: its query rows, and the block's key columns (global order)."""
    return None if bias is None else take(_rows(bias, call), -1, call.key_ranges)


def _lengths(q, call):
    """The padding mask of a ``full_lengths`` call: every row and column valid."""
    if not call.full_lengths:
        return None
    b = q.shape[0]
    rows, cols = call.rows[1] - call.rows[0], call.cols[1] - call.cols[0]
    return tuple(torch.full((b,), n, dtype=torch.int32, device=q.device) for n in (rows, cols))


def _steps(ring, buffer):
    """Yields (source rank, buffer of its key / value shard) for each step, shifting the
    buffer on to the next rank before the step's work and waiting for the next one after."""
    for step in range(ring.size):
        pending = ring.shift(buffer, KV) if step + 1 < ring.size else None
        yield ring.source(step), buffer
        if pending is not None:
            buffer = pending.wait()


def sdpa(
    q,
    k,
    v,
    *,
    group=None,
    layout="zigzag",
    scale=None,
    causal=False,
    causal_alignment="top_left",
    window=None,
    bias=None,
):
    """Context-parallel attention forward on this rank's shards; returns ``(o, stats)``, this
    rank's rows of O and of Stats (natural-log log-sum-exp, float32, +inf for a row with no
    kept key), as :func:`rime.sdpa` would return them for these rows of the whole problem.

    q (B, Hq, Sq / W, Dqk), k (B, Hk, Skv / W, Dqk), v (B, Hv, Skv / W, Dv): this rank's shards
    in ``layout`` (``shard``); bias (1|B, 1|Hq, Sq / W, Skv): this rank's query rows, every key
    column. The mask options are those of the whole sequence. Every rank of ``group`` (None:
    the default group) calls it with shards of the same shapes.
    """
    options = Options.of(layout, scale, causal, causal_alignment, window)
    problem = Problem(q, k, v, bias, options, group)
    o_out, stats_out = F.forward_outputs(q, v)
    o, lse = _merge.start(o_out.shape, stats_out.shape, q.device)
    shapes = (k.shape, v.shape)
    for source, kv in _steps(problem.ring, pack((k, v))):
        ks, vs = unpack(kv, shapes)
        for call in problem.calls(source):
            o_b, stats_b = F.sdpa(
                _rows(q, call), _cols(ks, call), _cols(vs, call),
                scale=scale, window=(call.left, call.right), bias=_bias_block(bias, call),
                seq_lens=_lengths(q, call),
            )
            _merge.add(_rows(o, call), _rows(lse, call), o_b, stats_b)
    _merge.finish(o, lse, o_out, stats_out)
    return o_out, stats_out


def sdpa_backward(
    q,
    k,
    v,
    o,
    do,
    stats,
    *,
    group=None,
    layout="zigzag",
    scale=None,
    causal=False,
    causal_alignment="top_left",
    window=None,
    bias=None,
    dbias=False,
    deterministic=False,
):
    """The gradients of :func:`sdpa` on this rank's shards: ``o`` and ``stats`` are this
    rank's rows of the forward's outputs, ``do`` the gradient of ``o``; the options must be the
    forward's. Returns :class:`rime.Gradients` (dq, dk, dv of this rank's shards; dbias of its
    bias rows with ``dbias=True``; dsink None). ``deterministic=True`` makes every block call
    deterministic; the ring's order of summation is fixed, so the gradients are then bitwise
    the same run to run for a given world size and layout.
    """
    if dbias and bias is None:
        raise ValueError("dbias: needs a bias")
    for name, t in (("o", o), ("do", do), ("stats", stats)):
        F._dims(t, name)
    options = Options.of(layout, scale, causal, causal_alignment, window)
    problem = Problem(q, k, v, bias, options, group, dbias=dbias, deterministic=deterministic)
    ring = problem.ring
    out = F.backward_outputs(q, k, v, bias if dbias else None)
    if dbias:
        out.dbias.zero_()  # pairs no call covers have no gradient
    dq = torch.zeros(q.shape, dtype=torch.float32, device=q.device)
    shapes = (k.shape, v.shape)
    arriving = None
    for source, kv in _steps(ring, pack((k, v))):
        ks, vs = unpack(kv, shapes)
        dkv = torch.zeros(kv.shape, dtype=torch.float32, device=kv.device)
        dks, dvs = unpack(dkv, shapes)
        for call in problem.calls(source):
            g = F.sdpa_backward(
                _rows(q, call), _cols(ks, call), _cols(vs, call),
                _rows(o, call), _rows(do, call), _rows(stats, call),
                scale=scale, window=(call.left, call.right), bias=_bias_block(bias, call),
                seq_lens=_lengths(q, call), dbias=dbias, deterministic=deterministic,
            )
            _rows(dq, call).add_(g.dq)
            _cols(dks, call).add_(g.dk)
            _cols(dvs, call).add_(g.dv)
            if dbias:
                put(_rows(out.dbias, call), -1, call.key_ranges, g.dbias)
        if arriving is not None:
            # The sum of the ranks before this one (source, source + 1, ...), then this one's.
            dkv = arriving.wait().add_(dkv)
        arriving = ring.shift(dkv, DKV) if ring.size > 1 else None
    mine = arriving.wait() if arriving is not None else dkv
    dk, dv = unpack(mine, shapes)
    out.dq.copy_(dq)
    out.dk.copy_(dk)
    out.dv.copy_(dv)
    return out
