"""Context parallelism: attention forward and backward with q, k, v sharded along the
sequence over a ``torch.distributed`` process group (ring attention). See docs/distributed.md.

- ``shard(x, rank, world_size, dim=2, layout="zigzag")`` / ``unshard(parts, ...)``: a rank's
  part of a whole tensor and back. ``"zigzag"`` (rank r holds chunks r and 2W-1-r of 2W)
  balances causal work; ``"contiguous"`` (rank r holds the r-th of W chunks).
- ``attention(q, k, v, ..., group=None, layout="zigzag")``: differentiable, the call of
  ``rime.attention`` on this rank's shards.
- ``sdpa`` / ``sdpa_backward``: the ring forward (this rank's O and Stats) and gradients.
- ``block_calls``: the rime calls of one ring step and each one's mask (the diagonal offset of
  a block expressed as top-left bounds on the block's kept rectangle).

The messages are ``torch.distributed`` point-to-point operations (``batch_isend_irecv``) to the
next and previous rank of the group: gloo on CPU tensors (rime's CPU engine), NCCL on CUDA
(the sm120 engine).
"""

from ._attention import sdpa, sdpa_backward
from ._autograd import AttentionFunction, attention
from ._blocks import BlockCall, block_calls
from ._sharding import LAYOUTS, segments, shard, unshard

__all__ = [
    "AttentionFunction",
    "BlockCall",
    "LAYOUTS",
    "attention",
    "block_calls",
    "sdpa",
    "sdpa_backward",
    "segments",
    "shard",
    "unshard",
]
