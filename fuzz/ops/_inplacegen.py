"""Parameter generators and argument filters for the in-place rows (:mod:`.inplace`).

Each ``gen_*`` returns parameters ``infer`` accepts for the given arguments or raises
:class:`GenerationFailure`; ``ok_*`` are the rows' ``accepts`` filters. Index constants
are drawn so that writes never race (distinct targets where values differ).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from aliasfuzz.errors import GenerationFailure, InvalidArgument
from aliasfuzz.fuzz.ops._build import can_cast, fits, result_dtype
from aliasfuzz.fuzz.ops._viewgen import gen_index
from aliasfuzz.fuzz.ops.core import Draw, ValueMeta, broadcast_shapes

Metas = Sequence[ValueMeta]
_FLOAT = ("float32", "float64", "float16", "bfloat16")


def int_list(v, what: str) -> tuple[int, ...]:
    """``v`` as a tuple of ints; InvalidArgument when it is not a list of ints."""
    if not isinstance(v, list | tuple) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise InvalidArgument(f"{what} must be a list of integers, got {v!r}")
    return tuple(v)


def nested_shape(v) -> tuple[int, ...]:
    """Shape of a rectangular nested list; raise InvalidArgument if ragged."""
    if not isinstance(v, list | tuple):
        return ()
    shapes = {nested_shape(x) for x in v}
    if len(shapes) > 1:
        raise InvalidArgument("index must be a rectangular nested list")
    return (len(v),) + (shapes.pop() if shapes else ())


def as_lists(v):
    """Nested tuples (frozen JSON params) back to nested lists, for ``torch.tensor``."""
    return [as_lists(x) for x in v] if isinstance(v, list | tuple) else v


def _overlap(a: ValueMeta, b: ValueMeta) -> bool:
    return a.storage == b.storage and bool(a.byte_footprint() & b.byte_footprint())


def _try(fn) -> bool:
    try:
        fn()
    except InvalidArgument:
        return False
    return True


def _value(draw: Draw, dtype: str):
    v = draw.scalar(dtype)
    return v if fits(v, dtype) else 0


def _castable_scalar(draw: Draw, m: ValueMeta, kinds) -> int | float | bool:
    kind = m.dtype if not draw.boolean(0.2) else draw.choice(kinds)
    v = draw.scalar(kind)
    if not can_cast(result_dtype([m], v), m.dtype) or not fits(v, m.dtype):
        v = _value(draw, m.dtype)
    return v


def ok_inplace(check):
    def ok(metas: Metas) -> bool:
        from aliasfuzz.fuzz.ops._build import inplace_infer

        def run():
            if check:
                check(metas, {})
            inplace_infer(metas, {}, ())

        return _try(run)

    return ok


def ok_scalar_inplace(check):
    # Bool tensors only take bool scalars in place, which TorchScript turns into ints:
    # not generated (hand-written programs may still use them in eager pipelines).
    def ok(metas: Metas) -> bool:
        return metas[0].dtype != "bool" and (check is None or _try(lambda: check(metas, {})))

    return ok


def gen_inplace_scalar(kinds):
    def gen(draw: Draw, metas: Metas) -> dict:
        return {"other": _castable_scalar(draw, metas[0], kinds)}

    return gen


def _broadcasts_to(shape, target) -> bool:
    try:
        return broadcast_shapes(shape, target) == tuple(target)
    except InvalidArgument:
        return False


def ok_copy(metas: Metas) -> bool:
    return _broadcasts_to(metas[1].shape, metas[0].shape)


def gen_value(draw: Draw, metas: Metas) -> dict:
    m = metas[0]
    v = draw.scalar(m.dtype if not draw.boolean(0.2) else "float32")
    return {"value": v if fits(v, m.dtype) else _value(draw, m.dtype)}


def gen_clamp(draw: Draw, metas: Metas) -> dict:
    m = metas[0]
    lo, hi = _value(draw, m.dtype), _value(draw, m.dtype)
    lo, hi = min(lo, hi), max(lo, hi)
    if draw.boolean(0.2):
        return {"min": lo, "max": None} if draw.boolean() else {"min": None, "max": hi}
    return {"min": lo, "max": hi}


def ok_addcmul(metas: Metas) -> bool:
    from aliasfuzz.fuzz.ops.inplace import _addcmul_infer

    return _try(lambda: _addcmul_infer(metas, {"value": 1}, ()))


def gen_addcmul(draw: Draw, metas: Metas) -> dict:
    return {"value": _value(draw, metas[0].dtype)}


def ok_index_put(metas: Metas) -> bool:
    self, values = metas
    return (
        self.dtype == values.dtype and self.ndim >= 1 and self.numel > 0
        and not self.has_internal_overlap() and not _overlap(self, values)
    )


def gen_index_put(draw: Draw, metas: Metas) -> dict:
    self, values = metas
    options = []
    for k in range(1, min(self.ndim, 2) + 1):
        rest = self.shape[k:]
        if values.ndim > len(rest) + 1 or any(n == 0 for n in self.shape[:k]):
            continue
        vs = (1,) * (len(rest) + 1 - values.ndim) + values.shape
        if vs[0] and all(a in (1, b) for a, b in zip(vs[1:], rest, strict=True)):
            options.append((k, vs[0]))
    if not options:
        raise GenerationFailure("values do not fit any index_put_ target")
    k, lead = draw.choice(options)
    accumulate = draw.boolean(0.3)
    space = list(itertools.product(*(range(n) for n in self.shape[:k])))
    n = lead if lead != 1 else draw.integer(1, min(3, len(space)))
    if n > len(space) and not accumulate:
        raise GenerationFailure("not enough distinct rows")
    rows = []
    for _ in range(n):
        pool = space if accumulate else [r for r in space if r not in rows]
        rows.append(draw.choice(pool))
    return {"indices": [list(c) for c in zip(*rows, strict=True)], "accumulate": accumulate}


def has_rows(metas: Metas) -> bool:
    m = metas[0]
    return m.ndim >= 1 and m.numel > 0 and not m.has_internal_overlap()


def gen_index_fill(draw: Draw, metas: Metas) -> dict:
    m = metas[0]
    d = draw.integer(0, m.ndim - 1)
    n = m.shape[d]
    idx = [draw.integer(0, n - 1) - (n if draw.boolean(0.15) else 0) for _ in range(draw.integer(1, 3))]
    return {"dim": d, "index": idx, "value": _value(draw, m.dtype)}


def ok_masked_fill(metas: Metas) -> bool:
    self, mask = metas
    return mask.dtype == "bool" and _broadcasts_to(mask.shape, self.shape)


def ok_scatter(metas: Metas) -> bool:
    self, src = metas
    return (
        has_rows(metas) and self.dtype == src.dtype and self.ndim == src.ndim
        and src.numel > 0 and not _overlap(self, src)
    )


def gen_scatter(value: bool):
    def gen(draw: Draw, metas: Metas) -> dict:
        self = metas[0]
        src = None if value else metas[1]
        d = draw.integer(0, self.ndim - 1)
        shape = []
        for k in range(self.ndim):
            cap = self.shape[k] if k != d else (3 if value else self.shape[d])
            if src is not None:
                cap = min(cap, src.shape[k])
            shape.append(draw.integer(1, cap))
        lines = itertools.product(*(range(n) for j, n in enumerate(shape) if j != d))
        table = {}
        for line in lines:
            if value:
                vals = [draw.integer(0, self.shape[d] - 1) for _ in range(shape[d])]
            else:
                pool, vals = list(range(self.shape[d])), []
                for _ in range(shape[d]):
                    vals.append(draw.choice(pool))
                    pool.remove(vals[-1])
            table[line] = vals

        def build(prefix):
            if len(prefix) == self.ndim:
                line = prefix[:d] + prefix[d + 1 :]
                return table[line][prefix[d]]
            return [build(prefix + (i,)) for i in range(shape[len(prefix)])]

        out = {"dim": d, "index": build(())}
        if value:
            out["value"] = _value(draw, self.dtype)
        return out

    return gen


def ok_setitem(aug: bool, scalar: bool):
    def ok(metas: Metas) -> bool:
        if scalar:
            return not (aug and metas[0].dtype == "bool")  # see ok_scalar_inplace
        return True  # y may alias x: only its overlap with the indexed target matters (gen)

    return ok


def gen_setitem(aug: bool, scalar: bool):
    def gen(draw: Draw, metas: Metas) -> dict:
        from aliasfuzz.fuzz.ops.inplace import _setitem_infer

        infer = _setitem_infer(aug)
        for attempt in range(8):
            idx = gen_index(draw, metas)["idx"] if attempt < 7 else [[None, None, None]]
            p = {"idx": idx}
            if scalar:
                target = metas[0]
                p["value"] = _castable_scalar(draw, target, ("int64", "float32")) if aug else _value(
                    draw, target.dtype
                )
            if _try(lambda p=p: infer(metas, p, ())) and (scalar or _target_ok(metas, idx)):
                return p
        raise GenerationFailure("no index whose view the value fits")

    return gen


def _target_ok(metas: Metas, idx) -> bool:
    # validate refuses a read (y) partially overlapping the written target x[idx].
    from aliasfuzz.fuzz.ops._indexing import index_layout

    target, y = index_layout(metas[0], idx), metas[1]
    same = (target.shape, target.stride, target.offset, target.dtype) == (y.shape, y.stride, y.offset, y.dtype)
    return same or not _overlap(target, y)


def ok_foreach(metas: Metas) -> bool:
    # list entries must be pairwise disjoint: validation's overlapping-writes rule (CUDA's
    # fast path writes every entry at once, CPU entry by entry)
    return all(not m.has_internal_overlap() and m.dtype != "bool" for m in metas) and disjoint(metas)


def disjoint(metas: Metas) -> bool:
    """Whether no two of ``metas`` share a byte and none is another's very layout (possibly
    the same tensor: validation refuses one tensor written twice even when empty); an
    undecided pair counts as sharing."""
    from aliasfuzz.fuzz.ops.overlap import overlap, same_layout

    return all(
        not same_layout(a, b) and overlap(a, b).overlaps is False
        for k, a in enumerate(metas)
        for b in metas[k + 1 :]
    )


def gen_foreach(draw: Draw, metas: Metas) -> dict:
    kinds = {m.dtype for m in metas}
    if kinds - set(_FLOAT):
        return {"other": draw.integer(0, 3)}
    return {"other": draw.scalar("float32")}
