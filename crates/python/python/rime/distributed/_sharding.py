"""Where each rank's part of a sequence lies: the sharding layouts, and taking or putting a
rank's rows (or columns) out of or into a whole tensor.

A layout cuts a sequence of length S over W ranks into *segments* (global start, size), each
rank holding its segments one after the other:

- ``"contiguous"``: rank r holds rows [r S/W, (r + 1) S/W).
- ``"zigzag"``: the sequence is cut into 2W chunks of S/2W; rank r holds chunk r then chunk
  2W-1-r. Under a causal mask every rank then has the same work (the early chunk sees few
  keys, the late one many).
"""

LAYOUTS = ("zigzag", "contiguous")


def check_layout(layout):
    """``layout`` itself, or ValueError naming it."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout: {layout!r} is not one of {', '.join(LAYOUTS)}")
    return layout


def parts_per_rank(layout):
    """How many segments each rank holds: 2 zigzag, 1 contiguous."""
    return 2 if check_layout(layout) == "zigzag" else 1


def segments(layout, rank, world_size, length, name="length"):
    """The (global start, size) segments rank ``rank`` of ``world_size`` holds of a sequence of
    ``length``, in its local order. ValueError (naming ``name``) when ``length`` does not split
    evenly."""
    parts = parts_per_rank(layout)
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"rank: {rank} is not a rank of a world of {world_size}")
    n = parts * world_size
    if length % n:
        raise ValueError(
            f"{name}: {length} is not a multiple of {n} ({layout} layout over {world_size} ranks)"
        )
    c = length // n
    if parts == 1:
        return ((rank * c, c),)
    return ((rank * c, c), ((n - 1 - rank) * c, c))


def _dim(x, dim):
    return dim % x.dim()


def take(x, dim, ranges):
    """The rows of ``x`` along ``dim`` in ``ranges`` ((start, size) pairs), one after the
    other: a view for one range, a new tensor for more."""
    d = _dim(x, dim)
    pieces = [x.narrow(d, start, size) for start, size in ranges]
    if len(pieces) == 1:
        return pieces[0]
    import torch

    return torch.cat(pieces, dim=d)


def put(dst, dim, ranges, src):
    """Writes ``src`` (the rows ``take(dst, dim, ranges)`` would give) into ``dst``."""
    d = _dim(dst, dim)
    offset = 0
    for start, size in ranges:
        dst.narrow(d, start, size).copy_(src.narrow(d, offset, size))
        offset += size


def shard(x, rank, world_size, *, dim=2, layout="zigzag"):
    """Rank ``rank``'s part of ``x`` (a whole tensor) along ``dim`` (2: the sequence of
    (B, H, S, D) q, k, v, o, do; for a bias (1|B, 1|H, Sq, Skv) the query rows, dim 2, with
    every key column), as a new contiguous tensor."""
    ranges = segments(layout, rank, world_size, x.shape[dim], name=f"dim {dim}")
    return take(x, dim, ranges).contiguous()


def unshard(parts, *, dim=2, layout="zigzag"):
    """The whole tensor from every rank's part (a list in rank order): the inverse of
    :func:`shard`."""
    import torch

    parts = list(parts)
    world_size = len(parts)
    first = parts[0]
    shape = list(first.shape)
    shape[dim] *= world_size
    out = torch.empty(shape, dtype=first.dtype, device=first.device)
    for rank, part in enumerate(parts):
        if part.shape != first.shape:
            raise ValueError(
                f"parts: rank {rank}'s part is {tuple(part.shape)}, rank 0's {tuple(first.shape)}"
            )
        put(out, dim, segments(layout, rank, world_size, shape[dim], name=f"dim {dim}"), part)
    return out
