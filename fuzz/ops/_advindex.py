"""Advanced indexing whose indices are program values (data-dependent footprints).

``x.index_put_((i0, ...), v, accumulate)`` and ``x[i0, ...] = v`` with integer index
tensors taken from the program (inputs or results), as in ``shared/cases/b20``, and the
gather ``x[i0, ...]`` (a fresh tensor, as in ``shared/cases/c06``). Their
content is unknown to ``infer``, so these rows:

* write (the gather: read) all of ``x`` as far as footprints go (an upper bound; tag
  ``data_dependent``);
* cannot check index bounds or repeated indices: a hand-written program must keep them in
  range and, without ``accumulate``, distinct (eager would raise or race otherwise);
* have no ``gen``: the generator uses the constant-index rows of :mod:`.inplace`.

Shape and dtype rules mirror ``index_put_`` (``aten/src/ATen/native/TensorAdvancedIndexing.cpp``):
index tensors broadcast together, the indexed shape is their shape followed by ``x``'s
remaining dims, values broadcast to it and have ``x``'s dtype.
"""

from __future__ import annotations

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ops._build import lit, scalar_param
from aliasfuzz.fuzz.ops.core import OpDef, OpKind, ValueMeta, broadcast_shapes, fresh

__all__ = ["ADV_OPS"]

_INDEX_DTYPES = ("int64", "int32")
_TAGS = frozenset({"data_dependent"})


def _indexed_shape(self: ValueMeta, idx) -> tuple[int, ...]:
    if not idx or len(idx) > self.ndim:
        raise InvalidArgument(f"expected 1..{self.ndim} index tensors, got {len(idx)}")
    for m in idx:
        if m.dtype not in _INDEX_DTYPES:
            raise InvalidArgument(f"index tensors must be int64 or int32, got {m.dtype}")
    return broadcast_shapes(*(m.shape for m in idx)) + self.shape[len(idx) :]


def _check_target(self: ValueMeta, values: ValueMeta | None) -> None:
    if self.has_internal_overlap():
        raise InvalidArgument("index_put_: more than one element of the written-to tensor refers to a single memory location")
    if values is not None and values.storage == self.storage and values.byte_footprint() & self.byte_footprint():
        raise InvalidArgument("index_put_: values overlap the written-to tensor")


def _index_put_infer(metas, p, outs):
    self, values, *idx = metas
    target = _indexed_shape(self, idx)
    if values.dtype != self.dtype:
        raise InvalidArgument(f"index_put_ requires equal dtypes, got {self.dtype} and {values.dtype}")
    if broadcast_shapes(values.shape, target) != target:
        raise InvalidArgument(f"shape mismatch: values of shape {values.shape} cannot be broadcast to {target}")
    _check_target(self, values)
    return (self,)


def _setitem_infer(metas, p, outs):
    self, values, *idx = metas
    target = _indexed_shape(self, idx)
    if values.dtype != self.dtype:
        raise InvalidArgument(f"index put requires equal dtypes, got {self.dtype} and {values.dtype}")
    shape = values.shape
    while shape and shape[0] == 1 and len(shape) > len(target):
        shape = shape[1:]  # setitem strips the value's leading size-1 dims
    if broadcast_shapes(shape, target) != target:
        raise InvalidArgument(f"shape mismatch: value of shape {values.shape} cannot be broadcast to {target}")
    _check_target(self, values)
    return ()


def _setitem_scalar_infer(metas, p, outs):
    self, *idx = metas
    _indexed_shape(self, idx)
    scalar_param(p, "value")
    _check_target(self, None)
    return ()


def _getitem_infer(metas, p, outs):
    self, *idx = metas
    return (fresh(outs[0], _indexed_shape(self, idx), self.dtype),)


def _setitem_scalar_apply(t, p):
    t[0][tuple(t[1:])] = p["value"]


def _setitem_apply(t, p):
    t[0][tuple(t[2:])] = t[1]


ADV_OPS = [
    OpDef(
        name="getitem_tensor", kind=OpKind.FUNCTIONAL, arity=(2, 4), infer=_getitem_infer,
        apply=lambda t, p: t[0][tuple(t[1:])],
        render=lambda e, p: f"{e[0]}[{', '.join(e[1:])}]",
        mutates=(), reads=None, tags=_TAGS,
        doc="x[i0, ...] with index tensors from the program (args: x, i0, ...): a fresh "
        "tensor (advanced indexing copies); footprint: reads all of x",
    ),
    OpDef(
        name="index_put_.Tensor", kind=OpKind.INPLACE, arity=(3, 5), infer=_index_put_infer,
        apply=lambda t, p: t[0].index_put_(tuple(t[2:]), t[1], accumulate=bool(p.get("accumulate", False))),
        render=lambda e, p: f"{e[0]}.index_put_(({', '.join(e[2:])},), {e[1]}, "
        f"accumulate={bool(p.get('accumulate', False))})",
        mutates=(0,), reads=None, tags=_TAGS,
        doc="x.index_put_((i0, ...), values, accumulate) with index tensors from the program "
        "(args: x, values, i0, ...); footprint: all of x",
    ),
    OpDef(
        name="setitem_tensor", kind=OpKind.INPLACE, arity=(3, 5), infer=_setitem_infer,
        apply=_setitem_apply,
        render=lambda e, p: f"{e[0]}[{', '.join(e[2:])}] = {e[1]}",
        mutates=(0,), reads=None, n_out=0, statement=True, tags=_TAGS,
        doc="x[i0, ...] = v with index tensors from the program (args: x, v, i0, ...); "
        "footprint: all of x",
    ),
    OpDef(
        name="setitem_tensor.Scalar", kind=OpKind.INPLACE, arity=(2, 4), infer=_setitem_scalar_infer,
        apply=_setitem_scalar_apply,
        render=lambda e, p: f"{e[0]}[{', '.join(e[1:])}] = {lit(p['value'])}",
        mutates=(0,), reads=None, n_out=0, statement=True, tags=_TAGS,
        doc="x[i0, ...] = scalar with index tensors from the program; footprint: all of x",
    ),
]
