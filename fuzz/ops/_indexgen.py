"""Parameter generators and argument filters for the index family (:mod:`.indexfam`).

Indices are drawn one by one with ``integer(0, n - 1)`` (shrinking toward 0: the shrunk
program hits the first slice or element) and counts with ``integer(1, cap)`` (toward one
index). Accumulating ops draw indices freely, so repeats occur and shrink toward all
zeros; non-accumulating ones draw from the remaining pool (distinct, as their rule wants).
Reductions and flags sit behind ``choice`` / ``boolean`` draws whose shrink target is the
default (``reduce`` first option, ``include_self=True``, ``accumulate=False``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from aliasfuzz.errors import GenerationFailure
from aliasfuzz.fuzz.ops._build import fits
from aliasfuzz.fuzz.ops._inplacegen import disjoint
from aliasfuzz.fuzz.ops.core import Draw, ValueMeta

Metas = Sequence[ValueMeta]


def _pair_ok(metas: Metas) -> bool:
    self, src = metas[0], metas[1]
    return (self.dtype == src.dtype and self.dtype != "bool" and self.ndim >= 1
            and self.numel > 0 and src.numel > 0)


def _target_ok(metas: Metas, kind: str) -> bool:
    # in place: self written (no self-overlap, no memory shared with source, as ATen asks);
    # out=: out has self's shape and dtype, and shares nothing with source
    self, src = metas[0], metas[1]
    if kind == "inplace":
        return not self.has_internal_overlap() and disjoint([self, src])
    if kind == "out":
        out = metas[2]
        return (out.shape == self.shape and out.dtype == self.dtype
                and not out.has_internal_overlap() and disjoint([out, src]))
    return True


def _dims(self: ValueMeta, src: ValueMeta, distinct: bool) -> list[int]:
    return [
        d for d in range(self.ndim)
        if src.ndim == self.ndim and src.shape[d] >= 1
        and (not distinct or src.shape[d] <= self.shape[d])
        and all(a == b for k, (a, b) in enumerate(zip(src.shape, self.shape, strict=True)) if k != d)
    ]


def ok_dim(kind: str, distinct: bool = False):
    """Filter for dim-index rows: a dim along which ``source`` fits ``self``."""
    def ok(metas: Metas) -> bool:
        return _pair_ok(metas) and bool(_dims(metas[0], metas[1], distinct)) and _target_ok(metas, kind)

    return ok


def _indices(draw: Draw, n: int, k: int, distinct: bool) -> list[int]:
    if not distinct:
        return [draw.integer(0, n - 1) for _ in range(k)]
    pool, out = list(range(n)), []
    for _ in range(k):
        out.append(draw.choice(pool))
        pool.remove(out[-1])
    return out


def _reduce(draw: Draw, options) -> dict:
    return {"reduce": draw.choice(options), "include_self": not draw.boolean(0.3)}


def gen_dim(distinct: bool = False, reduce=None, alpha: bool = False):
    """Parameters of a dim-index row: ``dim``, ``index`` (of ``source.size(dim)`` entries)."""
    def gen(draw: Draw, metas: Metas) -> dict:
        self, src = metas[0], metas[1]
        dims = _dims(self, src, distinct)
        if not dims:
            raise GenerationFailure("source fits self along no dim")
        d = draw.choice(dims)
        p = {"dim": d, "index": _indices(draw, self.shape[d], src.shape[d], distinct)}
        if reduce:
            low = self.dtype in ("float16", "bfloat16")  # index_reduce prod: see indexfam
            p.update(_reduce(draw, [r for r in reduce if not (low and r == "prod")]))
        if alpha:
            a = draw.scalar(self.dtype) if draw.boolean(0.3) else 1
            p["alpha"] = a if fits(a, self.dtype) else 1
        return p

    return gen


def ok_scatter(kind: str):
    """Filter for scatter-index rows: same ndim, non-empty, and the target rules."""
    def ok(metas: Metas) -> bool:
        return _pair_ok(metas) and metas[0].ndim == metas[1].ndim and _target_ok(metas, kind)

    return ok


def gen_scatter(reduce=None):
    """Parameters of a scatter-index row: ``dim`` and a nested ``index`` (repeats allowed)."""
    def gen(draw: Draw, metas: Metas) -> dict:
        self, src = metas[0], metas[1]
        d = draw.integer(0, self.ndim - 1)
        shape = [draw.integer(1, src.shape[k] if k == d else min(src.shape[k], self.shape[k]))
                 for k in range(self.ndim)]
        n = self.shape[d]
        flat = [draw.integer(0, n - 1) for _ in itertools.product(*(range(s) for s in shape))]
        it = iter(flat)

        def build(depth):
            if depth == len(shape):
                return next(it)
            return [build(depth + 1) for _ in range(shape[depth])]

        p = {"dim": d, "index": build(0)}
        if reduce:
            p.update(_reduce(draw, reduce))
        return p

    return gen


def ok_put(kind: str):
    def ok(metas: Metas) -> bool:
        return _pair_ok(metas) and _target_ok(metas, kind)

    return ok


def ok_mask(kind: str):
    # masked_scatter_ may read a source that shares memory with self away from the written
    # elements (the general rules decide on the drawn mask); self must not overlap itself
    def ok(metas: Metas) -> bool:
        if kind == "inplace":
            return _pair_ok(metas) and not metas[0].has_internal_overlap()
        return _pair_ok(metas)

    return ok


def gen_put(draw: Draw, metas: Metas) -> dict:
    """``index`` of ``source.numel()`` flat positions; distinct unless ``accumulate``."""
    self, src = metas[0], metas[1]
    accumulate = draw.boolean(0.5)
    if not accumulate and src.numel > self.numel:
        raise GenerationFailure("more source elements than distinct positions")
    return {"index": _indices(draw, self.numel, src.numel, not accumulate), "accumulate": accumulate}


def gen_mask(draw: Draw, metas: Metas) -> dict:
    """A bool ``mask`` of ``self``'s shape (some dims 1: broadcast) selecting at most
    ``source.numel()`` elements of the broadcast."""
    self, src = metas[0], metas[1]
    shape = [1 if draw.boolean(0.2) else n for n in self.shape]
    per_true = 1
    for a, b in zip(shape, self.shape, strict=True):
        per_true *= b // a
    budget = src.numel // per_true

    def build(depth):
        nonlocal budget
        if depth == len(shape):
            hit = budget > 0 and not draw.boolean(0.4)
            budget -= hit
            return hit
        return [build(depth + 1) for _ in range(shape[depth])]

    return {"mask": build(0)}
