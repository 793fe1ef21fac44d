"""Parameter generators and small render helpers for the view rows (:mod:`.views`).

Every ``gen_*`` takes ``(draw, metas)`` and returns parameters that the row's ``infer``
accepts for these arguments, or raises :class:`GenerationFailure` when there are none.
Draws keep the common case first (shrinking moves toward it) and rare forms (negative
dims, ``-1`` sizes, steps) behind boolean draws.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import torch

from aliasfuzz.errors import GenerationFailure, InvalidArgument
from aliasfuzz.fuzz.ir import DTYPES
from aliasfuzz.fuzz.ops._layout import compute_view_stride
from aliasfuzz.fuzz.ops.core import Draw, ValueMeta

Metas = Sequence[ValueMeta]


def shape_lit(shape) -> str:
    """A list of ints as a list literal; the empty list as ``()`` (a ``[]`` is ambiguous)."""
    return "[" + ", ".join(str(int(n)) for n in shape) + "]" if len(shape) else "()"


def torch_dtype(name: str) -> torch.dtype:
    """``torch.<name>`` for a dtype name of :data:`DTYPES`; InvalidArgument otherwise."""
    if name not in DTYPES:
        raise InvalidArgument(f"unknown dtype {name!r}")
    return getattr(torch, name)


def _nonempty_dims(m: ValueMeta) -> list[int]:
    return [d for d in range(m.ndim) if m.shape[d] > 0]


def has_nonempty_dim(metas: Metas) -> bool:
    """Filter: the argument has a dimension of size > 0 (select, narrow, split, ...)."""
    return bool(_nonempty_dims(metas[0]))


def _maybe_negative(draw: Draw, d: int, ndim: int) -> int:
    return d - ndim if ndim and draw.boolean(0.15) else d


def _pick_dim(draw: Draw, dims: list[int], ndim: int) -> int:
    if not dims:
        raise GenerationFailure("no dimension fits")
    return _maybe_negative(draw, draw.choice(dims), ndim)


def gen_select(draw: Draw, metas: Metas) -> dict:
    m = metas[0]
    d = draw.choice(_nonempty_dims(m) or [None])
    if d is None:
        raise GenerationFailure("select needs a non-empty dim")
    n = m.shape[d]
    i = draw.integer(0, n - 1)
    return {"dim": _maybe_negative(draw, d, m.ndim), "index": i - n if draw.boolean(0.15) else i}


def gen_narrow(draw: Draw, metas: Metas) -> dict:
    m = metas[0]
    dims = _nonempty_dims(m)
    if not dims:
        raise GenerationFailure("narrow needs a non-empty dim")
    d = draw.choice(dims)
    n = m.shape[d]
    start = draw.integer(0, n - 1)
    return {"dim": _maybe_negative(draw, d, m.ndim), "start": start,
            "length": draw.integer(1, n - start)}


def gen_transpose(draw: Draw, metas: Metas) -> dict:
    nd = metas[0].ndim
    if nd == 0:
        return {"dim0": 0, "dim1": 0}
    return {"dim0": draw.integer(0, nd - 1), "dim1": _maybe_negative(draw, draw.integer(0, nd - 1), nd)}


def gen_permute(draw: Draw, metas: Metas) -> dict:
    rest = list(range(metas[0].ndim))
    dims = []
    while rest:
        d = draw.choice(rest)  # shrinks toward the identity permutation
        rest.remove(d)
        dims.append(d)
    return {"dims": dims}


def gen_unsqueeze(draw: Draw, metas: Metas) -> dict:
    return {"dim": draw.integer(0, metas[0].ndim)}


def gen_squeeze(draw: Draw, metas: Metas) -> dict:
    m = metas[0]
    if m.ndim == 0 or draw.boolean(0.3):
        return {}
    ones = [d for d in range(m.ndim) if m.shape[d] == 1]
    return {"dim": draw.choice(ones + [d for d in range(m.ndim) if d not in ones])}


def gen_expand(draw: Draw, metas: Metas) -> dict:
    m = metas[0]
    sizes = []
    for n in m.shape:
        if n == 1 and draw.boolean():
            sizes.append(draw.integer(2, 4))
        else:
            sizes.append(-1 if draw.boolean(0.15) else n)
    if draw.boolean(0.3):
        sizes.insert(0, draw.integer(1, 3))
    return {"size": sizes}


def gen_as_strided(draw: Draw, metas: Metas) -> dict:
    """An ``as_strided`` whose every element is an element of its source: one reaching
    further depends on the storage layout (rule ``layout-readout``,
    :mod:`aliasfuzz.fuzz.layout_contract`). Tries a few layouts, then a single element."""
    from aliasfuzz.fuzz.layout_contract import storage_elements

    els = storage_elements(metas[0])
    if not els:
        raise GenerationFailure("as_strided of an empty (or too large to enumerate) tensor")
    pool = sorted(els)
    for _ in range(8):
        nd = draw.integer(0, 2)
        size = [draw.integer(1, 3) for _ in range(nd)]
        stride = [draw.integer(1, 3) if not draw.boolean(0.1) else 0 for _ in range(nd)]
        offset = draw.choice(pool)
        drawn = replace(metas[0], shape=tuple(size), stride=tuple(stride), offset=offset)
        if storage_elements(drawn) <= els:
            return {"size": size, "stride": stride, "offset": offset}
    return {"size": [], "stride": [], "offset": draw.choice(pool)}


def gen_diagonal(draw: Draw, metas: Metas) -> dict:
    m = metas[0]
    if m.ndim < 2:
        raise GenerationFailure("diagonal needs 2 dims")
    d1 = draw.integer(0, m.ndim - 1)
    d2 = draw.choice([d for d in range(m.ndim) if d != d1])
    k = draw.integer(0, m.shape[d2]) if not draw.boolean(0.3) else -draw.integer(0, m.shape[d1])
    return {"offset": k, "dim1": d1, "dim2": d2}


def gen_view_dtype(draw: Draw, metas: Metas) -> dict:
    from aliasfuzz.fuzz.ops.views import _view_dtype

    m = metas[0]
    # Bool memory holds 0/1 bytes only: no view between bool and another dtype (the
    # bool-bytes rule of views._view_dtype refuses it).
    names = [d for d in DTYPES if d != "bool" and d != m.dtype]
    ok = []
    for d in names:
        try:
            _view_dtype(metas, {"dtype": d}, ())
        except InvalidArgument:
            continue
        ok.append(d)
    if not ok:
        raise GenerationFailure(f"no dtype view of {m.dtype} {m.shape}/{m.stride}")
    return {"dtype": draw.choice(ok)}


def _shape_candidates(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    numel = math.prod(shape)
    out = [(numel,)]
    for i in range(len(shape) - 1):
        out.append(shape[:i] + (shape[i] * shape[i + 1],) + shape[i + 2 :])
    for i, n in enumerate(shape):
        for a in range(2, n):
            if n % a == 0:
                out.append(shape[:i] + (a, n // a) + shape[i + 1 :])
    out.append((1,) + shape)
    out.append(tuple(n for n in shape if n != 1))
    out.append(shape)
    seen: dict[tuple[int, ...], None] = {}
    for s in out:
        seen.setdefault(s, None)
    return list(seen)


def _viewable(m: ValueMeta) -> list[tuple[int, ...]]:
    return [s for s in _shape_candidates(m.shape) if compute_view_stride(m.shape, m.stride, s) is not None]


def has_view_candidates(metas: Metas) -> bool:
    return bool(_viewable(metas[0]))


def _with_hole(draw: Draw, shape: tuple[int, ...]) -> list[int]:
    shape = list(shape)
    if shape and math.prod(shape) and draw.boolean(0.2):
        shape[draw.integer(0, len(shape) - 1)] = -1
    return shape


def gen_view(draw: Draw, metas: Metas) -> dict:
    cands = _viewable(metas[0])
    if not cands:
        raise GenerationFailure("no viewable shape")
    return {"shape": _with_hole(draw, draw.choice(cands))}


def gen_reshape(draw: Draw, metas: Metas) -> dict:
    return {"shape": _with_hole(draw, draw.choice(_shape_candidates(metas[0].shape)))}


def gen_index(draw: Draw, metas: Metas) -> dict:
    m = metas[0]
    items: list = []
    for d in range(draw.integer(1, m.ndim) if m.ndim else 0):
        n = m.shape[d]
        if n and draw.boolean(0.3):
            items.append(draw.integer(0, n - 1))
        elif draw.boolean():
            start = draw.integer(0, n)
            stop = draw.integer(start, n) if draw.boolean() else None
            items.append([start, stop, draw.choice([1, 2, 3])])
        else:
            items.append([None, None, None])
    if not items or draw.boolean(0.2):
        items.insert(draw.integer(0, len(items)), None)
    if draw.boolean(0.2):
        items.append("...")  # trailing: earlier ints keep addressing the dims drawn for them
    return {"idx": items}


def gen_split(draw: Draw, metas: Metas) -> dict:
    m = metas[0]
    d = _pick_dim(draw, _nonempty_dims(m), m.ndim)
    return {"split_size": draw.integer(1, m.shape[d]), "dim": d}


def gen_chunk(draw: Draw, metas: Metas) -> dict:
    m = metas[0]
    d = _pick_dim(draw, _nonempty_dims(m), m.ndim)
    return {"chunks": draw.integer(1, m.shape[d] + 1), "dim": d}


def gen_unbind(draw: Draw, metas: Metas) -> dict:
    m = metas[0]
    return {"dim": _pick_dim(draw, [d for d in _nonempty_dims(m) if m.shape[d] <= 6], m.ndim)}
