"""Exact footprints of concrete strided layouts as runs of bytes (private to memory.py).

A concrete layout's dimensions are ordered by decreasing ``|stride|`` (a permutation does not
change the footprint) and the innermost ones that are contiguous (stride equal to the run
so far) are fused into one run of ``run`` elements; the remaining outer dimensions are
enumerated with numpy. The footprint is then ``count`` byte intervals of one common length,
so overlap, self-overlap and coverage are decided exactly by sorting and ``searchsorted``.
This is the same dimension coalescing as ``TensorIterator``'s (aten/src/ATen/TensorIterator.cpp
``coalesce_dimensions``), after sorting by stride.

Layouts are duck-typed (``offset``, ``sizes``, ``strides``, ``itemsize``, all ints).
Index tuples returned are in the layout's own dimension order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["Runs", "cover", "overlap", "self_overlap"]


class Runs:
    """The footprint of a concrete non-empty layout as byte intervals ``[start, start + length)``."""

    def __init__(self, lay: Any) -> None:
        self.layout = lay
        dims = [k for k, s in enumerate(lay.sizes) if s != 1]
        order = sorted(dims, key=lambda k: -abs(lay.strides[k]))
        run, j = 1, len(order)
        while j > 0 and lay.strides[order[j - 1]] == run:
            run *= lay.sizes[order[j - 1]]
            j -= 1
        self.outer, self.inner = order[:j], order[j:]
        self.run = run
        self.length = run * lay.itemsize
        self.count = math.prod(lay.sizes[k] for k in self.outer)

    def starts(self) -> np.ndarray:
        """First byte of every run, in row-major order of the outer dimensions (int64)."""
        lay = self.layout
        e = np.array([lay.offset], dtype=np.int64)
        for k in self.outer:
            step = np.arange(lay.sizes[k], dtype=np.int64) * lay.strides[k]
            e = (e[:, None] + step[None, :]).reshape(-1)
        return e * lay.itemsize

    def index(self, row: int, byte: int, start: int) -> tuple[int, ...]:
        """Index tuple of the element of run ``row`` (starting at byte ``start``) holding ``byte``."""
        lay = self.layout
        idx = [0] * len(lay.sizes)
        for k, i in zip(self.outer, _unravel(row, [lay.sizes[k] for k in self.outer]), strict=True):
            idx[k] = i
        pos = (byte - start) // lay.itemsize
        for k, i in zip(self.inner, _unravel(pos, [lay.sizes[k] for k in self.inner]), strict=True):
            idx[k] = i
        return tuple(idx)


def _unravel(flat: int, sizes: Sequence[int]) -> tuple[int, ...]:
    out = []
    for s in reversed(sizes):
        flat, r = divmod(flat, s)
        out.append(r)
    return tuple(reversed(out))


#: Most runs sorted on one side, and most runs streamed through ``searchsorted`` on the other.
SORT_LIMIT = 1 << 20
STREAM_LIMIT = 1 << 22


def affordable(sorted_side: Runs, streamed_side: Runs | None = None) -> bool:
    """Whether the run-based algorithms stay within the limits (else the caller uses Z3)."""
    if streamed_side is None:
        return sorted_side.count <= SORT_LIMIT
    small, big = sorted((sorted_side.count, streamed_side.count))
    return small <= SORT_LIMIT and big <= STREAM_LIMIT


def overlap(ra: Runs, rb: Runs) -> tuple[int, tuple[int, ...], tuple[int, ...]] | None:
    """A shared byte and the index tuples reaching it, or None when disjoint."""
    if rb.count > ra.count:  # sort the side with fewer runs
        hit = overlap(rb, ra)
        return None if hit is None else (hit[0], hit[2], hit[1])
    sa, sb = ra.starts(), rb.starts()
    order = np.argsort(sb, kind="stable")
    tb = sb[order]
    # a run [s, s + La) meets a run [t, t + Lb) iff s - Lb < t < s + La
    k = np.searchsorted(tb, sa - rb.length, side="right")
    ok = k < tb.size
    hit = np.zeros(sa.size, dtype=bool)
    hit[ok] = tb[k[ok]] < sa[ok] + ra.length
    rows = np.nonzero(hit)[0]
    if rows.size == 0:
        return None
    i = int(rows[0])
    j = int(order[k[i]])
    s, t = int(sa[i]), int(sb[j])
    byte = max(s, t)
    return byte, ra.index(i, byte, s), rb.index(j, byte, t)


def self_overlap(ra: Runs) -> tuple[int, tuple[int, ...], tuple[int, ...]] | None:
    """A byte reached by two distinct index tuples, or None (runs are injective inside)."""
    sa = ra.starts()
    order = np.argsort(sa, kind="stable")
    ts = sa[order]
    clash = np.nonzero(np.diff(ts) < ra.length)[0]
    if clash.size == 0:
        return None
    p = int(clash[0])
    i, j = int(order[p]), int(order[p + 1])
    byte = int(ts[p + 1])
    return byte, ra.index(i, byte, int(sa[i])), ra.index(j, byte, int(sa[j]))


def cover(ra: Runs, rb: Runs) -> tuple[int, tuple[int, ...]] | None:
    """A byte of b outside a, with b's index tuple, or None when a covers b."""
    ts = np.sort(ra.starts())
    # merge a's runs into maximal disjoint segments [ms, me)
    ends = np.maximum.accumulate(ts + ra.length)
    new = np.ones(ts.size, dtype=bool)
    new[1:] = ts[1:] > ends[:-1]
    ms = ts[new]
    me = np.append(ends[np.nonzero(new)[0][1:] - 1], ends[-1])
    sb = rb.starts()
    k = np.searchsorted(ms, sb, side="right") - 1
    seg_end = np.where(k >= 0, me[np.maximum(k, 0)], np.iinfo(np.int64).min)
    bad = np.nonzero(seg_end < sb + rb.length)[0]
    if bad.size == 0:
        return None
    j = int(bad[0])
    t = int(sb[j])
    byte = max(t, int(seg_end[j]))
    return byte, rb.index(j, byte, t)
