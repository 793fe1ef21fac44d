"""Advanced indexing whose indices are program values (data-dependent footprints).

``x.index_put_((i0, ...), v, accumulate)`` and ``x[i0, ...] = v`` with integer index
tensors taken from the program (inputs or results), as in ``shared/cases/b20``, and the
gather ``x[i0, ...]`` (a fresh tensor, as in ``shared/cases/c06``). Their
content is unknown to ``infer``, so these rows:

* write (the gather: read) all of ``x`` as far as footprints go (an upper bound; tag
  ``data_dependent``);
* check index bounds and repeated indices where validation knows the index tensors'
  contents (:func:`check_known_indices`: an integer input on a storage whose ``init`` fixes
  its values, not written before the statement), else not: a hand-written program with
  computed indices must keep them in range and, without ``accumulate``, distinct (eager would
  raise or race otherwise);
* have no row ``gen``: the generator adds them as a whole statement with fresh index inputs
  of known contents (:mod:`aliasfuzz.fuzz._genadvindex`).

Shape and dtype rules mirror ``index_put_`` (``aten/src/ATen/native/TensorAdvancedIndexing.cpp``):
index tensors broadcast together, the indexed shape is their shape followed by ``x``'s
remaining dims, values broadcast to it and have ``x``'s dtype.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ops._build import lit, scalar_param
from aliasfuzz.fuzz.ops.core import (
    NoEagerMeaning,
    OpDef,
    OpKind,
    ValueMeta,
    broadcast_shapes,
    fresh,
)

__all__ = ["ADV_OPS", "INDEX_START", "check_known_indices"]

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


#: Row name -> position of its first index-tensor argument (the rest are index tensors).
INDEX_START: dict[str, int] = {
    "getitem_tensor": 1,
    "index_put_.Tensor": 2,
    "setitem_tensor": 2,
    "setitem_tensor.Scalar": 1,
}

#: Rows that write one value per index position: a repeated position without ``accumulate``
#: is written twice with values that may differ, in an order eager does not fix.
_DISTINCT = ("index_put_.Tensor", "setitem_tensor")


def check_known_indices(
    name: str, metas, params, contents: Sequence[Sequence[int] | None]
) -> None:
    """Check the index tensors of statement ``name`` (a row of :data:`INDEX_START`) against
    ``x`` (``metas[0]``) when every one's contents are known: ``contents[j]`` is index
    argument ``j``'s elements in row-major order, or None when unknown (then nothing is
    checked). Raises :class:`InvalidArgument` for an index out of ``[-n, n)`` (eager raises
    IndexError), and :class:`NoEagerMeaning` (``duplicate-index-writes``) when a writing row
    without ``accumulate`` hits one position twice: ``index_put_`` leaves the order of the
    two writes undefined (``aten/src/ATen/native/TensorAdvancedIndexing.cpp``, "If
    accumulate is False, the behavior is undefined if indices contain duplicate elements").
    ``setitem_tensor.Scalar`` writes one value everywhere, so repeats are defined there."""
    if not contents or any(c is None for c in contents):
        return
    self, idx = metas[0], metas[INDEX_START[name]:]
    shape = broadcast_shapes(*(m.shape for m in idx))
    positions = []
    for flat in itertools.product(*(range(n) for n in shape)):
        pos = []
        for d, (m, c) in enumerate(zip(idx, contents, strict=True)):
            at = [0 if m.shape[k] == 1 else i for k, i in enumerate(flat[len(flat) - m.ndim:])]
            i, n = c[_row_major(m.shape, at)], self.shape[d]
            if not -n <= i < n:
                raise InvalidArgument(f"index {i} is out of bounds for dimension {d} with size {n}")
            pos.append(i % n)
        positions.append(tuple(pos))
    if name in _DISTINCT and not params.get("accumulate", False) and len(set(positions)) != len(positions):
        raise NoEagerMeaning("duplicate-index-writes", "one element is written twice by one op "
                             "(order undefined)", f"{name} with repeated indices and accumulate=False")


def _row_major(shape: Sequence[int], at: Sequence[int]) -> int:
    k = 0
    for n, i in zip(shape, at, strict=True):
        k = k * n + i
    return k


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
