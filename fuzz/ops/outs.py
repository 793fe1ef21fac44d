"""``out=`` forms and functional scatters.

``torch.add(a, b, out=c)`` writes the broadcast result into ``c`` and returns ``c``. PyTorch
would resize an ``out`` of another shape (with a warning when non-empty); the registry only
accepts an ``out`` of exactly the broadcast shape, so no resize ever happens.

``slice_scatter`` / ``select_scatter`` / ``diagonal_scatter`` return a fresh copy of
``self`` with a part replaced by ``src``. Their result keeps ``self``'s sizes, strides and
storage offset on a fresh storage of ``self``'s storage size (``clone_preserve_strides``
in ``aten/src/ATen/native/TensorShape.cpp``); when ``self`` has a broadcast (stride 0)
dim, it is a plain ``clone()`` instead.
"""

from __future__ import annotations

import torch

from aliasfuzz.errors import GenerationFailure, InvalidArgument
from aliasfuzz.fuzz.ops._build import can_cast, fresh_strided, lit, result_dtype, scalar_param
from aliasfuzz.fuzz.ops._indexing import index_layout
from aliasfuzz.fuzz.ops._layout import empty_like_strides, is_non_overlapping_and_dense
from aliasfuzz.fuzz.ops.core import OpDef, OpKind, ValueMeta, broadcast_shapes
from aliasfuzz.fuzz.ops.views import _diagonal, _select

__all__ = ["OPS"]


def _out_infer(metas, p, outs):
    a, b, out = metas
    shape = broadcast_shapes(a.shape, b.shape)
    if out.shape != shape:
        raise InvalidArgument(f"out has shape {out.shape}, the result {shape} (no resizing here)")
    dt = result_dtype([a, b])
    if not can_cast(dt, out.dtype):
        raise InvalidArgument(f"result type {dt} can't be cast to the desired output type {out.dtype}")
    return (out,)


def _out_ok(metas) -> bool:
    try:
        _out_infer(metas, {}, ())
    except InvalidArgument:
        return False
    return not metas[2].has_internal_overlap()


def _out_row(name: str, fn) -> OpDef:
    return OpDef(
        name=f"{name}.out", kind=OpKind.OUT, arity=3, infer=_out_infer,
        apply=lambda t, p, fn=fn: fn(t[0], t[1], out=t[2]),
        render=lambda e, p, name=name: f"torch.{name}({e[0]}, {e[1]}, out={e[2]})",
        mutates=(2,), reads=(0, 1),
        doc=f"torch.{name}(a, b, out=c): c has exactly the broadcast shape; returns c",
        gen=lambda draw, metas: {}, accepts=_out_ok,
    )


def _scalar_out_infer(metas, p, outs):
    a, out = metas
    other = scalar_param(p, "other")
    if out.shape != a.shape:
        raise InvalidArgument(f"out has shape {out.shape}, the result {a.shape} (no resizing here)")
    dt = result_dtype([a], other)
    if not can_cast(dt, out.dtype):
        raise InvalidArgument(f"result type {dt} can't be cast to the desired output type {out.dtype}")
    return (out,)


def _scalar_out_row(name: str, fn) -> OpDef:
    return OpDef(
        name=f"{name}.Scalar_out", kind=OpKind.OUT, arity=2, infer=_scalar_out_infer,
        apply=lambda t, p, fn=fn: fn(t[0], p["other"], out=t[1]),
        render=lambda e, p, name=name: f"torch.{name}({e[0]}, {lit(p['other'])}, out={e[1]})",
        mutates=(1,), reads=(0,), tags=frozenset({"twin_only"}),
        doc=f"torch.{name}(a, scalar, out=c): c has exactly a's shape; returns c "
        "(shared/cases/c06's torch.mul(field[rows], 0.5, out=work)); not drawn yet",
    )


def _preserved(self: ValueMeta, out: str) -> ValueMeta:
    """The layout of ``clone_preserve_strides(self)`` bound to ``out``."""
    if not is_non_overlapping_and_dense(self.shape, self.stride) and any(
        n > 1 and s == 0 for n, s in zip(self.shape, self.stride, strict=True)
    ):
        return fresh_strided(out, self.shape, empty_like_strides(self.shape, self.stride), self.dtype)
    if self.storage_nbytes % self.itemsize:
        raise InvalidArgument("scatter: self's storage size is not a multiple of its itemsize")
    return ValueMeta(self.shape, self.stride, self.offset, self.dtype, out, self.storage_nbytes)


def _slice_part(m: ValueMeta, p) -> ValueMeta:
    from aliasfuzz.fuzz.ops.core import norm_dim

    if m.ndim == 0:
        raise InvalidArgument("slice_scatter on a 0-d tensor")
    d = norm_dim(p.get("dim", 0), m.ndim)
    step = p.get("step", 1)
    if not isinstance(step, int) or step <= 0:
        raise InvalidArgument(f"slice step must be positive, got {step!r}")
    item = [p.get("start"), p.get("end"), step]
    return index_layout(m, [[None, None, None]] * d + [item])


def _scatter_infer(part):
    def infer(metas, p, outs):
        self, src = metas
        result = _preserved(self, outs[0])
        target = part(result, p)
        if target.shape != src.shape:
            raise InvalidArgument(
                f"expected src to have a size equal to the slice of self: src {src.shape}, slice {target.shape}"
            )
        if target.numel <= 1 << 16 and target.has_internal_overlap():
            raise InvalidArgument("scatter target overlaps itself")
        return (result,)

    return infer


def _gen_part(part, candidates):
    def gen(draw, metas):
        self, src = metas
        ok = [c for c in candidates(self) if _fits(part, self, src, c)]
        if not ok:
            raise GenerationFailure("src fits no part of self")
        return draw.choice(ok)

    return gen


def _fits(part, self, src, p) -> bool:
    try:
        return part(self, p).shape == src.shape
    except InvalidArgument:
        return False


def _slice_candidates(m):
    for d in range(m.ndim):
        n = m.shape[d]
        for start in range(n + 1):
            for end in range(start, n + 1):
                for step in (1, 2):
                    yield {"dim": d, "start": start, "end": end, "step": step}


def _select_candidates(m):
    for d in range(m.ndim):
        for i in range(m.shape[d]):
            yield {"dim": d, "index": i}


def _diagonal_candidates(m):
    for d1 in range(m.ndim):
        for d2 in range(m.ndim):
            if d1 != d2:
                for k in range(-m.shape[d1], m.shape[d2] + 1):
                    yield {"offset": k, "dim1": d1, "dim2": d2}


def _scatter_row(name, part, candidates, apply, render, doc) -> OpDef:
    return OpDef(
        name=name, kind=OpKind.SCATTER, arity=2, infer=_scatter_infer(part), apply=apply,
        render=render, doc=doc, gen=_gen_part(part, candidates),
        accepts=lambda metas: metas[0].ndim >= 1 and any(
            _fits(part, metas[0], metas[1], c) for c in candidates(metas[0])
        ),
    )


def _select_part(m, p):
    return _select((m,), p, ())[0]


def _diagonal_part(m, p):
    return _diagonal((m,), p, ())[0]


OPS = [
    _out_row("add", torch.add),
    _out_row("mul", torch.mul),
    _scalar_out_row("add", torch.add),
    _scalar_out_row("mul", torch.mul),
    _scatter_row(
        "slice_scatter", _slice_part, _slice_candidates,
        lambda t, p: torch.slice_scatter(t[0], t[1], p.get("dim", 0), p.get("start"), p.get("end"), p.get("step", 1)),
        lambda e, p: f"torch.slice_scatter({e[0]}, {e[1]}, dim={p.get('dim', 0)}, start={lit(p.get('start'))}, "
        f"end={lit(p.get('end'))}, step={p.get('step', 1)})",
        "torch.slice_scatter(x, src, dim, start, end, step): fresh, x's strides and offset",
    ),
    _scatter_row(
        "select_scatter", _select_part, _select_candidates,
        lambda t, p: torch.select_scatter(t[0], t[1], p["dim"], p["index"]),
        lambda e, p: f"torch.select_scatter({e[0]}, {e[1]}, {p['dim']}, {p['index']})",
        "torch.select_scatter(x, src, dim, index): fresh, x's strides and offset",
    ),
    _scatter_row(
        "diagonal_scatter", _diagonal_part, _diagonal_candidates,
        lambda t, p: torch.diagonal_scatter(t[0], t[1], p.get("offset", 0), p.get("dim1", 0), p.get("dim2", 1)),
        lambda e, p: f"torch.diagonal_scatter({e[0]}, {e[1]}, {p.get('offset', 0)}, {p.get('dim1', 0)}, {p.get('dim2', 1)})",
        "torch.diagonal_scatter(x, src, offset, dim1, dim2): fresh, x's strides and offset",
    ),
]
