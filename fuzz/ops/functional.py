"""Functional ops: fresh storage out, arguments only read.

Result layouts mirror how ATen allocates them: elementwise ops through TensorIterator
(``TensorIteratorBase::build``: output strides follow the inputs' dim order), ``clone`` and
``flip`` through ``empty_like(self, MemoryFormat::Preserve)``, reductions and ``mm``
contiguous, ``cat`` in the inputs' common suggested memory format. ``contiguous`` of an
already contiguous tensor returns ``self`` (an alias, tag ``maybe_alias``), as PyTorch does.
"""

from __future__ import annotations

import torch

from aliasfuzz.errors import GenerationFailure, InvalidArgument
from aliasfuzz.fuzz.ops._build import (
    elementwise_infer,
    fresh_strided,
    iterator_operand,
    lit,
    no_bool,
    promote,
    result_dtype,
)
from aliasfuzz.fuzz.ops._layout import (
    channels_last_strides,
    empty_like_strides,
    is_contiguous,
    memory_format_strides,
    tensor_iterator_strides,
)
from aliasfuzz.fuzz.ops.core import OpDef, OpKind, ValueMeta, broadcast_shapes, fresh, norm_dim

__all__ = ["OPS", "broadcasts"]


def broadcasts(metas) -> bool:
    """Whether the arguments' shapes broadcast together (a generator filter)."""
    try:
        broadcast_shapes(*(m.shape for m in metas))
    except InvalidArgument:
        return False
    return True


def _sub_infer(metas, p, outs):
    if any(m.dtype == "bool" for m in metas) or isinstance(p.get("other"), bool):
        raise InvalidArgument("subtraction with a bool tensor is not supported")
    return elementwise_infer(metas, p, outs)


def _scalar_gen(kinds):
    # No bool scalars: TorchScript passes a Python bool as an int, so bool scalars would
    # make the scripted program compute another dtype than eager.
    def gen(draw, metas):
        m = metas[0]
        dt = m.dtype if m.dtype != "bool" and not draw.boolean(0.2) else draw.choice(kinds)
        return {"other": draw.scalar(dt)}

    return gen


def _binary(
    name: str, fn, infer=elementwise_infer, ok=lambda metas: True, kinds=("int64", "float32")
) -> list[OpDef]:
    """``torch.<name>(a, b)`` over two tensors, and ``torch.<name>(a, scalar)`` with ``other``."""
    return [
        OpDef(
            name=name, kind=OpKind.FUNCTIONAL, arity=2, infer=infer,
            apply=lambda t, p, fn=fn: fn(t[0], t[1]),
            render=lambda e, p, name=name: f"torch.{name}({e[0]}, {e[1]})",
            doc=f"torch.{name}(a, b): broadcast, promoted, TensorIterator strides",
            gen=lambda draw, metas: {},
            accepts=lambda metas, ok=ok: broadcasts(metas) and ok(metas),
        ),
        OpDef(
            name=f"{name}.Scalar", kind=OpKind.FUNCTIONAL, arity=1, infer=infer,
            apply=lambda t, p, fn=fn: fn(t[0], p["other"]),
            render=lambda e, p, name=name: f"torch.{name}({e[0]}, {lit(p['other'])})",
            doc=f"torch.{name}(a, scalar)",
            gen=_scalar_gen(kinds), accepts=ok,
        ),
    ]


def _unary_layout(m: ValueMeta, dtype: str, out: str) -> ValueMeta:
    return fresh_strided(out, m.shape, tensor_iterator_strides(m.shape, [iterator_operand(m, dtype)]), dtype)


def _neg_infer(metas, p, outs):
    no_bool(metas[0], "negation")
    return (_unary_layout(metas[0], metas[0].dtype, outs[0]),)


def _sin_infer(metas, p, outs):
    m = metas[0]
    return (_unary_layout(m, m.dtype if m.is_float else "float32", outs[0]),)


def _clone_infer(metas, p, outs):
    m = metas[0]
    return (fresh_strided(outs[0], m.shape, empty_like_strides(m.shape, m.stride), m.dtype),)


def _contiguous_infer(metas, p, outs):
    m = metas[0]
    return (m,) if is_contiguous(m.shape, m.stride) else (fresh(outs[0], m.shape, m.dtype),)


def _reduce_infer(mean: bool):
    def infer(metas, p, outs):
        m = metas[0]
        d = norm_dim(p["dim"], m.ndim)
        if mean and not m.is_float:
            raise InvalidArgument(f"mean(): input dtype must be floating point, got {m.dtype}")
        dt = m.dtype if m.is_float else "int64"
        keep = bool(p.get("keepdim", False))
        shape = list(m.shape)
        if m.ndim:
            if keep:
                shape[d] = 1
            else:
                del shape[d]
        return (fresh(outs[0], shape, dt),)

    return infer


def _reduce_gen(draw, metas):
    m = metas[0]
    return {"dim": draw.integer(0, max(m.ndim - 1, 0)), "keepdim": draw.boolean()}


def _cat_parts(metas, p):
    for i, m in enumerate(metas):
        if m.ndim == 0:
            raise InvalidArgument(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    # Legacy rule: 1-d empty tensors are skipped in shape checks (cat_compute_output_memory_format).
    parts = [m for m in metas if m.shape != (0,)] or [metas[0]]
    d = norm_dim(p.get("dim", 0), parts[0].ndim)
    ref = parts[0].shape
    for m in parts:
        if m.ndim != len(ref) or any(a != b for k, (a, b) in enumerate(zip(m.shape, ref, strict=False)) if k != d):
            raise InvalidArgument(
                f"sizes of tensors must match except in dimension {d}: {ref} vs {m.shape}"
            )
    return parts, d


def _cat_infer(metas, p, outs):
    parts, d = _cat_parts(metas, p)
    shape = list(parts[0].shape)
    shape[d] = sum(m.shape[d] for m in parts)
    dt = promote(*(m.dtype for m in metas))
    fmts = {memory_format_strides(m.shape, m.stride) for m in metas}
    if fmts == {"channels_last"}:
        return (fresh_strided(outs[0], shape, channels_last_strides(shape), dt),)
    return (fresh(outs[0], shape, dt),)


def _cat_ok(metas) -> bool:
    try:
        _cat_parts(metas, {"dim": 0})
    except InvalidArgument:
        return False
    return True


def _cat_gen(draw, metas):
    ndim = metas[0].ndim
    ok = [d for d in range(ndim) if _ok_dim(metas, d)]
    if not ok:
        raise GenerationFailure("no dim to concatenate along")
    return {"dim": draw.choice(ok)}


def _ok_dim(metas, d):
    try:
        _cat_parts(metas, {"dim": d})
    except InvalidArgument:
        return False
    return True


def _where_infer(metas, p, outs):
    cond, x, y = metas
    if cond.dtype != "bool":
        raise InvalidArgument(f"where expected condition to be a boolean tensor, got {cond.dtype}")
    shape = broadcast_shapes(cond.shape, x.shape, y.shape)
    dt = result_dtype([x, y])
    # where_self_out casts x and y to the result dtype first (Tensor.to keeps the layout
    # when dense, else infers dense strides), then builds a TensorIterator [cond, x, y].
    ops = [(cond.shape, cond.stride), iterator_operand(x, dt), iterator_operand(y, dt)]
    return (fresh_strided(outs[0], shape, tensor_iterator_strides(shape, ops), dt),)


def _flip_infer(metas, p, outs):
    m = metas[0]
    dims = [norm_dim(d, m.ndim) for d in p["dims"]]
    if len(set(dims)) != len(dims):
        raise InvalidArgument(f"flip dims {list(p['dims'])} repeat a dim")
    return (fresh_strided(outs[0], m.shape, empty_like_strides(m.shape, m.stride), m.dtype),)


def _flip_gen(draw, metas):
    nd = metas[0].ndim
    return {"dims": [d for d in range(nd) if draw.boolean()] or ([0] if nd else [])}


def _matmul_infer(metas, p, outs):
    a, b = metas
    if a.dtype != b.dtype:
        raise InvalidArgument(f"expected m1 and m2 to have the same dtype, got {a.dtype} != {b.dtype}")
    no_bool(a, "matmul")
    if not (1 <= a.ndim <= 2 and 1 <= b.ndim <= 2):
        raise InvalidArgument("matmul is modelled for 1-d and 2-d operands only")
    k_a, k_b = a.shape[-1], b.shape[0]
    if k_a != k_b:
        raise InvalidArgument(f"matmul: shapes {a.shape} and {b.shape} cannot be multiplied")
    shape = a.shape[:-1] + b.shape[1:]
    return (fresh(outs[0], shape, a.dtype),)


def _matmul_ok(metas) -> bool:
    # generated for floating dtypes only: CUDA has no integer matmul ("dot" not implemented
    # for 'Long': 0.7 % of the programs of a 10-minute H200 campaign); CPU programs may
    # still multiply integers when written by hand
    a, b = metas
    return (
        a.dtype == b.dtype and "float" in a.dtype and 1 <= a.ndim <= 2 and 1 <= b.ndim <= 2
        and a.shape[-1] == b.shape[0]
    )


_NOT_BOOL = lambda metas: all(m.dtype != "bool" for m in metas)  # noqa: E731

OPS = [
    *_binary("add", torch.add),
    *_binary("mul", torch.mul),
    *_binary("sub", torch.sub, _sub_infer, _NOT_BOOL, ("int64", "float32")),
    OpDef(name="neg", kind=OpKind.FUNCTIONAL, arity=1, infer=_neg_infer,
          apply=lambda t, p: torch.neg(t[0]), render=lambda e, p: f"torch.neg({e[0]})",
          doc="torch.neg(x) (not bool)", gen=lambda draw, metas: {}, accepts=_NOT_BOOL),
    OpDef(name="sin", kind=OpKind.FUNCTIONAL, arity=1, infer=_sin_infer,
          apply=lambda t, p: torch.sin(t[0]), render=lambda e, p: f"torch.sin({e[0]})",
          doc="torch.sin(x): integers and bools give float32", gen=lambda draw, metas: {}),
    OpDef(name="tanh", kind=OpKind.FUNCTIONAL, arity=1, infer=_sin_infer,
          apply=lambda t, p: torch.tanh(t[0]), render=lambda e, p: f"torch.tanh({e[0]})",
          doc="torch.tanh(x): integers and bools give float32", gen=lambda draw, metas: {}),
    OpDef(name="clone", kind=OpKind.FUNCTIONAL, arity=1, infer=_clone_infer,
          apply=lambda t, p: t[0].clone(), render=lambda e, p: f"{e[0]}.clone()",
          doc="x.clone(): dense layouts keep their strides (memory_format=preserve)",
          gen=lambda draw, metas: {}),
    OpDef(name="contiguous", kind=OpKind.FUNCTIONAL, arity=1, infer=_contiguous_infer,
          apply=lambda t, p: t[0].contiguous(), render=lambda e, p: f"{e[0]}.contiguous()",
          doc="x.contiguous(): x itself when already contiguous, else a contiguous copy",
          gen=lambda draw, metas: {}, tags=frozenset({"maybe_alias"})),
    OpDef(name="sum", kind=OpKind.FUNCTIONAL, arity=1, infer=_reduce_infer(False),
          apply=lambda t, p: t[0].sum(p["dim"], keepdim=bool(p.get("keepdim", False))),
          render=lambda e, p: f"{e[0]}.sum({p['dim']}, keepdim={bool(p.get('keepdim', False))})",
          doc="x.sum(dim, keepdim): ints and bools sum to int64", gen=_reduce_gen),
    OpDef(name="mean", kind=OpKind.FUNCTIONAL, arity=1, infer=_reduce_infer(True),
          apply=lambda t, p: t[0].mean(p["dim"], keepdim=bool(p.get("keepdim", False))),
          render=lambda e, p: f"{e[0]}.mean({p['dim']}, keepdim={bool(p.get('keepdim', False))})",
          doc="x.mean(dim, keepdim) (floating only)", gen=_reduce_gen,
          accepts=lambda metas: metas[0].is_float),
    OpDef(name="cat", kind=OpKind.FUNCTIONAL, arity=(1, 4), infer=_cat_infer,
          apply=lambda t, p: torch.cat(list(t), p.get("dim", 0)),
          render=lambda e, p: f"torch.cat([{', '.join(e)}], {p.get('dim', 0)})",
          doc="torch.cat(tensors, dim): promoted dtype, common memory format",
          gen=_cat_gen, accepts=_cat_ok),
    OpDef(name="where", kind=OpKind.FUNCTIONAL, arity=3, infer=_where_infer,
          apply=lambda t, p: torch.where(t[0], t[1], t[2]),
          render=lambda e, p: f"torch.where({e[0]}, {e[1]}, {e[2]})",
          doc="torch.where(cond, x, y): cond must be bool", gen=lambda draw, metas: {},
          accepts=lambda metas: metas[0].dtype == "bool" and broadcasts(metas)),
    OpDef(name="flip", kind=OpKind.FUNCTIONAL, arity=1, infer=_flip_infer,
          apply=lambda t, p: t[0].flip(list(p["dims"])),
          render=lambda e, p: f"{e[0]}.flip({'[' + ', '.join(map(str, p['dims'])) + ']' if p['dims'] else '()'})",
          doc="x.flip(dims)", gen=_flip_gen),
    OpDef(name="matmul", kind=OpKind.FUNCTIONAL, arity=2, infer=_matmul_infer,
          apply=lambda t, p: torch.matmul(t[0], t[1]),
          render=lambda e, p: f"torch.matmul({e[0]}, {e[1]})",
          doc="torch.matmul(a, b) for 1-d/2-d operands (dot, mv, mm); same dtype",
          gen=lambda draw, metas: {}, accepts=_matmul_ok),
]
