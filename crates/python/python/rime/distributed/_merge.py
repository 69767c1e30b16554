"""Merging attention over key blocks by their log-sum-exp.

rime's Stats is the natural-log log-sum-exp of a row's masked, scaled, biased scores
(docs/sdpa-backward.md, section 1), and +inf for a row with no kept key (so that the backward's
``exp(S - Stats)`` is 0). For the attention of one row over the keys of blocks a and b,

    lse = log(exp(lse_a) + exp(lse_b))
    o   = exp(lse_a - lse) o_a + exp(lse_b - lse) o_b

where a block with no kept key counts as lse = -inf (weight 0). The running merge is kept in
float32, in the order the blocks come (fixed by the ring, so the result is reproducible).
"""

import torch


def start(shape_o, shape_stats, device):
    """The empty merge: o 0 and lse -inf (float32)."""
    o = torch.zeros(shape_o, dtype=torch.float32, device=device)
    lse = torch.full(shape_stats, float("-inf"), dtype=torch.float32, device=device)
    return o, lse


def add(o, lse, o_block, stats_block):
    """Merges one block's ``o_block`` and ``stats_block`` (rime's forward outputs for the same
    rows) into ``o``, ``lse`` in place."""
    block = torch.where(torch.isposinf(stats_block), float("-inf"), stats_block)
    merged = torch.logaddexp(lse, block)
    some = torch.isfinite(merged)
    base = torch.where(some, merged, 0.0)
    w_old = torch.where(some, torch.exp(lse - base), 0.0)
    w_new = torch.where(some, torch.exp(block - base), 0.0)
    o.mul_(w_old).add_(w_new * o_block.float())
    lse.copy_(merged)


def finish(o, lse, o_out, stats_out):
    """Writes the merge into ``o_out`` (rounded to its dtype) and ``stats_out`` (with rime's
    +inf for rows with no kept key)."""
    o_out.copy_(o)
    stats_out.copy_(torch.where(torch.isneginf(lse), float("inf"), lse))
