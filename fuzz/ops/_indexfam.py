"""Shape, footprint and duplicate rules of the index family (:mod:`.indexfam`).

Three index kinds, each with the elements it writes in ``self`` (or in a fresh copy of it):

* *dim index* (``index_copy``, ``index_add``, ``index_reduce``): a 1-d ``index`` along
  ``dim``; ``source`` has ``self``'s shape except ``source.size(dim) == len(index)``
  (``index_func_meta_impl`` / ``index_copy_`` checks, ``aten/src/ATen/native/
  TensorAdvancedIndexing.cpp``); writes the slices ``self.select(dim, i)``;
* *scatter index* (``scatter_add``, ``scatter_reduce``): a nested ``index`` of ``self``'s
  ndim, ``index.size(k) <= src.size(k)`` and ``<= self.size(k)`` for ``k != dim``
  (``scatter_gather_dtype_check`` / ``scatter_shape_check``, ``ScatterGatherChecks.h``);
  writes one element per index entry;
* *flat index* (``put``): positions in ``self``'s row-major logical order (``put_`` treats
  ``self`` as 1-d); ``masked_scatter`` writes the elements its (broadcast) mask selects.

Index and mask constants are parameters (rendered inline), so these footprints are exact.
Non-accumulating writes (``index_copy``, ``put(accumulate=False)``) that hit one element
twice have no eager meaning (the docs: "the result is nondeterministic" / "undefined"):
:func:`distinct` raises the ``duplicate-index-writes`` rule. Accumulating ones combine
repeated hits (order matters only for floating rounding: the fp64 shadow's tolerance).
"""

from __future__ import annotations

import itertools
import math

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ops import _inplacegen as g
from aliasfuzz.fuzz.ops._indexing import index_layout
from aliasfuzz.fuzz.ops.core import NoEagerMeaning, ValueMeta, broadcast_shapes, norm_dim
from aliasfuzz.fuzz.ops.inplace import _scatter_targets

INDEX_REDUCE = ("prod", "mean", "amax", "amin")
SCATTER_REDUCE = ("sum", "prod", "mean", "amax", "amin")


def distinct(targets, what: str) -> None:
    """Raise ``duplicate-index-writes`` when a non-accumulating op hits one target twice."""
    if len(set(targets)) != len(targets):
        raise NoEagerMeaning("duplicate-index-writes", "one element is written twice by one op "
                             "(order undefined)", f"{what} with repeated indices")


def check_operands(self: ValueMeta, src: ValueMeta, what: str) -> None:
    """dtype rules shared by the family: equal dtypes, no bool (not modelled: TorchScript
    passes bool scalars as ints, and bool reductions add nothing to aliasing)."""
    if self.dtype == "bool" or src.dtype == "bool":
        raise InvalidArgument(f"{what} on bool tensors is not modelled")
    if src.dtype != self.dtype:
        raise InvalidArgument(f"{what}: self ({self.dtype}) and source ({src.dtype}) must have "
                              "the same scalar type")


def check_inplace_target(self: ValueMeta, src: ValueMeta | None, what: str) -> None:
    """What ATen refuses on the written-to tensor: self-overlap (``assert_no_internal_overlap``)
    and any shared memory with ``source`` (``assert_no_overlap``: the index family checks
    whole tensors, not the written elements)."""
    if self.has_internal_overlap():
        raise InvalidArgument(f"{what}: more than one element of the written-to tensor refers "
                              "to a single memory location")
    if src is not None and self.storage == src.storage and self.byte_footprint() & src.byte_footprint():
        raise InvalidArgument(f"{what}: some elements of the source and the written-to tensor "
                              "overlap (refer to a single memory location)")


def reduce_param(p, options, what: str) -> str:
    r = p.get("reduce")
    if r not in options:
        raise InvalidArgument(f"{what}: reduce must be one of {options}, got {r!r}")
    if not isinstance(p.get("include_self", True), bool):
        raise InvalidArgument(f"{what}: include_self must be a bool")
    return r


# -- dim index --------------------------------------------------------------------------


def dim_rows(self: ValueMeta, src: ValueMeta, p, what: str) -> tuple[int, list[int]]:
    """(dim, index list) of a dim-index op, checked against ``self`` and ``source``."""
    if self.ndim == 0:
        raise InvalidArgument(f"{what} is modelled for tensors with at least one dim")
    d = norm_dim(p["dim"], self.ndim)
    idx = list(g.int_list(p["index"], f"{what} index"))
    n = self.shape[d]
    if not idx or any(not 0 <= i < n for i in idx):
        raise InvalidArgument(f"{what}: index {idx} out of range for size {n} (non-empty, "
                              "non-negative: negative indices are not modelled)")
    if src.ndim != self.ndim or src.shape[d] != len(idx) or any(
        a != b for k, (a, b) in enumerate(zip(src.shape, self.shape, strict=True)) if k != d
    ):
        raise InvalidArgument(f"{what}: source shape {src.shape} must match self {self.shape} "
                              f"except at dim {d}, where it is the index length {len(idx)}")
    return d, idx


def dim_parts(self: ValueMeta, d: int, idx) -> list[ValueMeta]:
    """The slices ``self.select(d, i)`` for each distinct ``i`` of ``idx``, in order."""
    return [index_layout(self, [[None, None, None]] * d + [i]) for i in dict.fromkeys(idx)]


# -- scatter index ----------------------------------------------------------------------


def scatter_cells(self: ValueMeta, src: ValueMeta, p) -> list[tuple[int, ...]]:
    """Index tuples of ``self`` an index-tensor scatter hits (with repeats, index order)."""
    return _scatter_targets(self, p, src)


def element(m: ValueMeta, cell) -> ValueMeta:
    """The 0-d view of ``m`` at index tuple ``cell``."""
    return m.view((), (), m.offset + sum(i * s for i, s in zip(cell, m.stride, strict=True)))


# -- flat index and masks ---------------------------------------------------------------


def flat_cells(self: ValueMeta, p, what: str) -> list[tuple[int, ...]]:
    """Index tuples of ``put``'s flat positions (row-major over ``self``'s logical shape)."""
    idx = list(g.int_list(p["index"], f"{what} index"))
    n = self.numel
    if not idx or any(not 0 <= i < n for i in idx):
        raise InvalidArgument(f"{what}: index {idx} out of range for {n} elements (non-empty, "
                              "non-negative: negative indices are not modelled)")
    cells = []
    for i in idx:
        cell = []
        for size in reversed(self.shape):
            cell.append(i % size)
            i //= size
        cells.append(tuple(reversed(cell)))
    return cells


def mask_cells(self: ValueMeta, p, what: str) -> list[tuple[int, ...]]:
    """Index tuples of ``self`` a (broadcast) bool mask selects, in row-major order."""
    mask = p["mask"]
    shape = g.nested_shape(mask)
    if broadcast_shapes(self.shape, shape) != self.shape:
        raise InvalidArgument(f"{what}: mask of shape {shape} does not broadcast to {self.shape}")
    cells = []
    lead = self.ndim - len(shape)
    for cell in itertools.product(*(range(n) for n in self.shape)):
        v = mask
        for k, size in enumerate(shape):
            v = v[0 if size == 1 else cell[lead + k]]
        if not isinstance(v, bool):
            raise InvalidArgument(f"{what}: mask entries must be bools, got {v!r}")
        if v:
            cells.append(cell)
    return cells


def nested_lit(v) -> str:
    """A nested list of ints or bools as a list literal (``torch.tensor`` input)."""
    if isinstance(v, list | tuple):
        return "[" + ", ".join(nested_lit(x) for x in v) + "]"
    return repr(v) if isinstance(v, bool) else str(int(v))


def numel(shape) -> int:
    return math.prod(shape)
