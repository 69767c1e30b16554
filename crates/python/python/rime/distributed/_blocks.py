"""Which rime calls one step of the ring makes, and the mask of each.

At a step, a rank holds its own queries and the keys of one source rank, each the
concatenation of its segments (``_sharding.segments``). The global mask (docs/sdpa-backward.md,
section 2.1) keeps query row i and key column j when

    j <= i + shift + right   and   j > i + shift - left

(shift 0 top-left, Skv - Sq bottom-right; a bound that is None is absent). Seen from a block
whose first query is global row qs and first key global column ks, that is the same band with
the block's own indices and the *diagonal offset* ``qs - ks + shift``. rime's graph has no
offset, but it has top-left bounds: a block's mask is the band with bounds ``right + offset``
and ``left - offset``. Those may be negative (rime takes right >= 0 and left >= 1), so each
block is first cut to the rectangle of its kept pairs, whose band, from the rectangle's own
corner, always has a right bound >= 0 and a left bound >= 1 (:func:`cut`). A block with no
kept pair is no call at all; a bound that cannot mask anything in its rectangle is dropped.

Two graph rules then shape a call: rime refuses a 1 x 1 problem (SHP002), so a lone kept pair
is widened by one masked pair within its block (:func:`callable_cut`), and it takes a left bound
with more rows than columns only with a padding mask (MSK006, the cuDNN frontend's rule), so
such a call carries the block's full lengths as one (``full_lengths``), which masks nothing.

Cells (one query segment against one key segment) whose bands agree with one offset over a
larger rectangle are merged into one call (:func:`block_calls`): under the zigzag layout with a
causal mask the diagonal step is one causal call over the local queries and keys, and every
other step one unmasked call over half of them.
"""

from dataclasses import dataclass
from typing import Optional, Tuple


@dataclass(frozen=True)
class Cut:
    """The kept part of a block: its rows [row0, row1) and columns [col0, col1), and the
    top-left band on that rectangle (``left``, ``right``; None: no bound there)."""

    rows: Tuple[int, int]
    cols: Tuple[int, int]
    left: Optional[int]
    right: Optional[int]


def cut(m, n, offset, left, right):
    """The :class:`Cut` of an ``m`` x ``n`` block that keeps (i, j) when
    ``j <= i + offset + right`` and ``j > i + offset - left`` (None bounds absent, ``left +
    right >= 1`` when both are given), or None when it keeps nothing."""
    r = None if right is None else offset + right
    l = None if left is None else left - offset
    # Row i keeps a key iff max(0, i - l + 1) <= min(n - 1, i + r): i >= -r and i <= n - 2 + l.
    # Column j is kept by a query iff j >= 1 - l and j <= m - 1 + r.
    row0 = 0 if r is None else max(0, -r)
    row1 = m if l is None else min(m, n - 1 + l)
    col0 = 0 if l is None else max(0, 1 - l)
    col1 = n if r is None else min(n, m + r)
    if row0 >= row1 or col0 >= col1:
        return None
    # The same band from the rectangle's corner: right >= 0 and left >= 1 by the choice of
    # row0 and col0 (at most one of them is nonzero when left + right >= 1).
    r = None if r is None else r + row0 - col0
    l = None if l is None else l - row0 + col0
    if r is not None and r >= col1 - col0 - 1:
        r = None
    if l is not None and l >= row1 - row0:
        l = None
    return Cut((row0, row1), (col0, col1), l, r)


def callable_cut(c, m, n):
    """``c`` (a :class:`Cut` of an ``m`` x ``n`` block) as rime takes it: a 1 x 1 cut grows to
    1 x 2 with right bound 0 (the pair to its right masked) or, at the block's last column, to
    2 x 1 with left bound 1 (the pair below masked). ValueError for a 1 x 1 block."""
    (r0, r1), (c0, c1) = c.rows, c.cols
    if r1 - r0 > 1 or c1 - c0 > 1:
        return c
    if c1 < n:
        return Cut(c.rows, (c0, c1 + 1), None, 0)
    if r1 < m:
        return Cut((r0, r1 + 1), c.cols, 1, None)
    raise ValueError(
        "q, k: a block of 1 query and 1 key is too small for rime (SHP002); use longer shards"
    )


@dataclass(frozen=True)
class BlockCall:
    """One rime call of a ring step: the local query rows ``rows`` = [start, stop), the source
    rank's local key rows ``cols`` = [start, stop), the top-left band on that block (``left``,
    ``right``), ``key_ranges``, the global key columns of ``cols`` as (start, size) pairs
    (where a bias holds them), and ``full_lengths``: the call needs a padding mask of the
    block's own lengths (a left bound with more rows than columns, rule MSK006)."""

    rows: Tuple[int, int]
    cols: Tuple[int, int]
    left: Optional[int]
    right: Optional[int]
    key_ranges: Tuple[Tuple[int, int], ...]
    full_lengths: bool


def _starts(segs):
    out, at = [], 0
    for _, size in segs:
        out.append(at)
        at += size
    return out


def _global_ranges(segs, start, stop):
    """The global (start, size) ranges of local rows [start, stop) of ``segs``."""
    out, at = [], 0
    for g, size in segs:
        lo, hi = max(start, at), min(stop, at + size)
        if lo < hi:
            out.append((g + lo - at, hi - lo))
        at += size
    return tuple(out)


def block_calls(q_segments, kv_segments, shift, left, right):
    """The calls of one ring step: queries of ``q_segments`` against keys of ``kv_segments``
    (each a tuple of (global start, size), in local order) under the global band (``shift``,
    ``left``, ``right``). Every kept (query, key) pair is in exactly one call, no call is empty,
    and the fewest calls the cell merges allow are made."""
    qs, ks = _starts(q_segments), _starts(kv_segments)

    def cell_cut(p, c, offset):
        return cut(q_segments[p][1], kv_segments[c][1], offset, left, right)

    def true_offset(p, c):
        return q_segments[p][0] - kv_segments[c][0] + shift

    def group(ps, cs):
        """The calls of the rectangle of cells ``ps`` x ``cs`` (consecutive indices)."""
        row0, col0 = qs[ps[0]], ks[cs[0]]
        cells = [(p, c) for p in ps for c in cs]
        truth = {pc: cell_cut(*pc, true_offset(*pc)) for pc in cells}
        # An offset of the whole rectangle; it reproduces every cell's mask or it is no merge.
        for p0, c0 in cells:
            offset = true_offset(p0, c0) - (qs[p0] - row0) + (ks[c0] - col0)
            if all(cell_cut(p, c, offset + (qs[p] - row0) - (ks[c] - col0)) == truth[(p, c)]
                   for p, c in cells):
                m = sum(q_segments[p][1] for p in ps)
                n = sum(kv_segments[c][1] for c in cs)
                whole = cut(m, n, offset, left, right)
                return [] if whole is None else [(row0, col0, m, n, whole)]
        return [(qs[p], ks[c], q_segments[p][1], kv_segments[c][1], truth[(p, c)])
                for p, c in cells if truth[(p, c)] is not None]

    rows, cols = list(range(len(q_segments))), list(range(len(kv_segments)))
    strategies = (
        [(rows, cols)],
        [(rows, [c]) for c in cols],
        [([p], cols) for p in rows],
        [([p], [c]) for p in rows for c in cols],
    )
    best = None
    for strategy in strategies:
        found = [call for ps, cs in strategy for call in group(ps, cs)]
        if best is None or len(found) < len(best):
            best = found
    calls = []
    for row0, col0, m, n, c in best:
        c = callable_cut(c, m, n)
        rows_ = (row0 + c.rows[0], row0 + c.rows[1])
        cols_ = (col0 + c.cols[0], col0 + c.cols[1])
        tall = c.left is not None and rows_[1] - rows_[0] > cols_[1] - cols_[0]
        calls.append(BlockCall(rows_, cols_, c.left, c.right,
                               _global_ranges(kv_segments, *cols_), tall))
    return tuple(calls)
