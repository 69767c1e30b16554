"""One rank's view of a context-parallel attention call: its place in the ring, the global
problem its local shards are part of (checked before any message is sent, so every rank
refuses a bad call at once instead of leaving the others waiting), and the block calls of each
ring step.

Every rank of the group passes shards of the same shapes: q (B, Hq, Sq / W, Dqk), k
(B, Hk, Skv / W, Dqk), v (B, Hv, Skv / W, Dv), a bias (1|B, 1|Hq, Sq / W, Skv) with this
rank's query rows and every key column in global order.
"""

import functools
from dataclasses import dataclass
from typing import Optional

import torch

from .. import functional as F
from .._errors import TensorError
from .._native import Graph
from ._blocks import block_calls
from ._ring import Ring
from ._sharding import check_layout, segments


@dataclass(frozen=True)
class Options:
    """The scalar options of a call: scale, the global band (``left``, ``right``,
    ``bottom_right``) and the sharding layout."""

    scale: Optional[float]
    left: Optional[int]
    right: Optional[int]
    bottom_right: bool
    layout: str

    @staticmethod
    def of(layout, scale, causal, causal_alignment, window):
        left, right, bottom_right = F.mask_bounds(causal, causal_alignment, window)
        return Options(scale, left, right, bottom_right, check_layout(layout))


def unsupported(seq_lens, alibi):
    """ValueError for the options of ``rime.attention`` the ring does not take (yet)."""
    if seq_lens is not None:
        raise ValueError(
            "seq_lens: padding masks are not supported by rime.distributed (the lengths are of "
            "the whole sequence, the shards of it are fixed by the layout)"
        )
    if alibi:
        raise ValueError(
            "alibi: not supported by rime.distributed (a block's ALiBi term depends on its "
            "global position, which rime's per-block call does not take)"
        )


@functools.lru_cache(maxsize=64)
def _check_global(dtype, q, k, v, bias, options, dbias, deterministic):
    """Raises what rime raises for the whole (unsharded) problem: its graph checked on the CPU
    reference engine's surface, which holds every graph-level rule (the engine of the block
    calls then checks its own limits on each block)."""
    g = Graph(io_data_type=dtype)
    b, hq, sq, _ = q
    dv = v[3]
    tq, tk, tv = (g.tensor(n, list(d)) for n, d in (("q", q), ("k", k), ("v", v)))
    to = g.tensor("o", [b, hq, sq, dv])
    tdo = g.tensor("do", [b, hq, sq, dv])
    stats = g.tensor("stats", [b, hq, sq, 1], data_type=torch.float32)
    tbias = g.tensor("bias", list(bias)) if bias is not None else None
    g.sdpa_backward(
        tq, tk, tv, to, tdo, stats,
        attn_scale=options.scale,
        left_bound=options.left,
        right_bound=options.right,
        diagonal_alignment="bottom_right" if options.bottom_right else "top_left",
        bias=tbias,
        dBias=dbias,
        use_deterministic_algorithm=deterministic,
    )
    g.check_support(target="cpu")


@functools.lru_cache(maxsize=256)
def _plan(rank, world_size, layout, sq, skv, options):
    """The block calls of every source rank (index: the source)."""
    shift = skv - sq if options.bottom_right else 0
    mine = segments(layout, rank, world_size, sq)
    return tuple(
        block_calls(mine, segments(layout, s, world_size, skv), shift, options.left, options.right)
        for s in range(world_size)
    )


class Problem:
    """A call on this rank: ``ring``, the global ``sq`` and ``skv``, and :meth:`calls`."""

    def __init__(self, q, k, v, bias, options, group, *, dbias=False, deterministic=False):
        self.ring = Ring(group)
        self.options = options
        w = self.ring.size
        b, hq, sq_local, dqk = F._dims(q, "q")
        kd = F._dims(k, "k")
        vd = F._dims(v, "v")
        self.sq, self.skv = sq_local * w, kd[2] * w
        for name, length, local in (("q", self.sq, sq_local), ("k", self.skv, kd[2])):
            segments(
                options.layout, self.ring.rank, w, length,
                name=f"{name}: the sequence ({local} per rank, {length} in all)",
            )
        if vd[2] != kd[2]:
            raise TensorError("v", f"holds {vd[2]} keys per rank, k {kd[2]}")
        gbias = None
        if bias is not None:
            bd = F._dims(bias, "bias")
            if bd[2] != sq_local or bd[3] != self.skv:
                raise TensorError(
                    "bias",
                    f"is {bd}; each rank holds its {sq_local} query rows and all {self.skv} key "
                    f"columns: (1|B, 1|Hq, {sq_local}, {self.skv})",
                )
            gbias = (bd[0], bd[1], self.sq, self.skv)
        _check_global(
            q.dtype,
            (b, hq, self.sq, dqk),
            (kd[0], kd[1], self.skv, kd[3]),
            (vd[0], vd[1], self.skv, vd[3]),
            gbias,
            options,
            dbias,
            deterministic,
        )
        self._calls = _plan(self.ring.rank, w, options.layout, self.sq, self.skv, options)

    def calls(self, source):
        """The :class:`~rime.distributed._blocks.BlockCall` s against ``source``'s keys."""
        return self._calls[source]
