"""Exact overlap of concrete layouts for validation: a shared byte, a self-overlap, or "undecided".

Validation (:mod:`aliasfuzz.fuzz.validate`) must decide, for every statement, whether two
operands share a byte of storage and whether a written operand maps two indices to one
element. ``fuzz`` may not import the oracle's Z3 model (:mod:`aliasfuzz.oracle.memory`), and
programs are concrete, so the answers here are exact by cheap arithmetic first and by
enumeration (numpy) second:

* different storages, an empty layout, or disjoint byte spans: no overlap;
* the same layout (sizes, strides, offset, dtype), non-empty: overlap (``Full`` in
  ``at::get_overlap_status``, ``aten/src/ATen/MemoryOverlap.cpp``);
* strides that nest (each dim's stride beyond everything the smaller dims reach): injective,
  no self-overlap; a stride 0 on a dim of size > 1: self-overlap (what
  ``at::has_internal_overlap`` answers ``Yes`` to);
* otherwise the footprints are enumerated when each has at most :data:`ENUM_LIMIT` elements,
  and the answer is ``None`` (undecided) above that: the caller rejects conservatively.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aliasfuzz.fuzz.ops.core import ENUM_LIMIT, ValueMeta

__all__ = ["Answer", "elements", "overlap", "same_layout", "self_overlap"]


@dataclass(frozen=True)
class Answer:
    """``overlaps``: True, False, or None when undecided (a footprint above ENUM_LIMIT);
    ``byte``: a shared storage byte (overlap) or a byte two indices reach (self-overlap),
    when one is known."""

    overlaps: bool | None
    byte: int | None = None


def same_layout(a: ValueMeta, b: ValueMeta) -> bool:
    """Whether ``a`` and ``b`` are the same view: storage, sizes, strides, offset and dtype."""
    return (a.storage, a.shape, a.stride, a.offset, a.dtype) == (
        b.storage, b.shape, b.stride, b.offset, b.dtype,
    )


def _span(m: ValueMeta) -> tuple[int, int]:
    """Bytes ``[lo, hi)`` between the lowest and highest element of non-empty ``m``."""
    lo = m.offset + sum((n - 1) * s for n, s in zip(m.shape, m.stride, strict=True) if s < 0)
    hi = m.offset + sum((n - 1) * s for n, s in zip(m.shape, m.stride, strict=True) if s > 0)
    k = m.itemsize
    return lo * k, (hi + 1) * k


def elements(m: ValueMeta) -> np.ndarray:
    """Every element index of ``m`` (with repeats), as a flat int64 array (no size check:
    callers compare ``m.numel`` with ``ENUM_LIMIT`` first)."""
    e = np.full((), m.offset, dtype=np.int64)
    for n, s in zip(m.shape, m.stride, strict=True):
        e = np.add.outer(e, np.arange(n, dtype=np.int64) * s)
    return e.reshape(-1)


def _bytes(m: ValueMeta) -> np.ndarray:
    k = m.itemsize
    return np.unique(np.add.outer(elements(m) * k, np.arange(k, dtype=np.int64)).reshape(-1))


def overlap(a: ValueMeta, b: ValueMeta) -> Answer:
    """Whether layouts ``a`` and ``b`` share a byte of storage (exact; see the module doc)."""
    if a.storage != b.storage or a.numel == 0 or b.numel == 0:
        return Answer(False)
    (la, ha), (lb, hb) = _span(a), _span(b)
    if ha <= lb or hb <= la:
        return Answer(False)
    if same_layout(a, b):
        return Answer(True, max(la, lb))
    if a.numel > ENUM_LIMIT or b.numel > ENUM_LIMIT:
        return Answer(None)
    if a.itemsize == b.itemsize:  # element indices of one itemsize align: compare them
        shared = np.intersect1d(elements(a), elements(b))
        return Answer(bool(shared.size), int(shared[0]) * a.itemsize if shared.size else None)
    shared = np.intersect1d(_bytes(a), _bytes(b), assume_unique=True)
    return Answer(bool(shared.size), int(shared[0]) if shared.size else None)


def self_overlap(m: ValueMeta) -> Answer:
    """Whether two indices of ``m`` reach one element (PyTorch refuses to write there)."""
    dims = sorted(((n, abs(s)) for n, s in zip(m.shape, m.stride, strict=True) if n > 1),
                  key=lambda d: d[1])
    if m.numel == 0 or not dims:
        return Answer(False)
    if dims[0][1] == 0:
        return Answer(True, m.offset * m.itemsize)
    reach = 0
    for n, s in dims:
        if s <= reach:
            break
        reach += (n - 1) * s
    else:
        return Answer(False)
    if m.numel > ENUM_LIMIT:
        return Answer(None)
    e = np.sort(elements(m))
    repeated = e[1:][e[1:] == e[:-1]]
    return Answer(bool(repeated.size), int(repeated[0]) * m.itemsize if repeated.size else None)
