"""Footprints of FX values for the ground truth: layouts, byte sets, and what each node reads.

Layouts come from ``node.meta["val"]`` (FakeTensor size / stride / storage offset) through
:func:`aliasfuzz.oracle.memory.layout_of` (storage identity ``StorageWeakRef``, as
``get_node_storage`` in ``torch/_inductor/fx_utils.py``). Concrete layouts are enumerated
exactly into sorted byte sets (numpy) up to :data:`BYTE_LIMIT` bytes; a larger footprint
raises :class:`_TooLarge` (the caller decides with the memory model of
:mod:`aliasfuzz.oracle.memory` instead, or says unknown), so no footprint can exhaust the
worker's memory (a view of 10**8 elements would need 3.2 GB of int64 byte offsets, and as
much again to sort them). While :data:`_HINTS` is set, symbolic layouts are concretized at
the traced sizes. :func:`_reads` is the per-node read model of
:mod:`aliasfuzz.oracle.candidates` (rule 2).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.fx

from aliasfuzz.oracle import memory as mem

__all__ = ["on_storage"]

aten = torch.ops.aten

_SCATTERS = {
    aten.slice_scatter.default: aten.slice.Tensor,
    aten.select_scatter.default: aten.select.int,
    aten.diagonal_scatter.default: aten.diagonal.default,
    aten.as_strided_scatter.default: aten.as_strided.default,
}
_META_ONLY = {
    aten.sym_size.int,
    aten.sym_stride.int,
    aten.sym_numel.default,
    aten.sym_storage_offset.default,
}


def _is_view(target: Any) -> bool:
    from torch.fx.passes.reinplace import _is_view_op

    return _is_view_op(target)


def _gen_scatter_targets():
    from torch._inductor.fx_passes import reinplace as rp

    return rp._generalized_scatter, rp._inplace_generalized_scatter


# ---------------------------------------------------------------------------------------
# layouts and byte sets


class _Undecidable(Exception):
    """The model cannot decide this candidate (symbolic layout, unmodeled node)."""


class _TooLarge(_Undecidable):
    """A footprint past :data:`BYTE_LIMIT`: too large to enumerate exactly."""


#: Most bytes one footprint is enumerated into (int64 offsets: 32 MiB per array, a few arrays
#: live at once while they are sorted and compared).
BYTE_LIMIT = 1 << 22


def _val(node: Any) -> torch.Tensor | None:
    if not isinstance(node, torch.fx.Node):
        return None
    v = node.meta.get("val")
    return v if isinstance(v, torch.Tensor) else None


#: While set (a dict symbol -> int), layouts are concretized at the traced sizes.
_HINTS: dict | None = None


def _hinted(lay: mem.Layout) -> mem.Layout:
    if _HINTS is None or lay.concrete:
        return lay

    def c(e):
        return e if isinstance(e, int) else int(e.xreplace(_HINTS))

    return mem.Layout(
        lay.storage,
        c(lay.offset),
        tuple(map(c, lay.sizes)),
        tuple(map(c, lay.strides)),
        lay.itemsize,
    )


def _layout(node: Any) -> mem.Layout | None:
    v = _val(node)
    if v is None or v.layout != torch.strided or not torch._C._has_storage(v):
        return None
    return _hinted(mem.layout_of(v))


def _elements(lay: mem.Layout) -> np.ndarray:
    """Element offsets of a concrete non-empty layout, in row-major index order (int64);
    :class:`_TooLarge` past :data:`BYTE_LIMIT` bytes."""
    n = math.prod(lay.sizes) * lay.itemsize
    if n > BYTE_LIMIT:
        raise _TooLarge(
            f"a footprint of {n} bytes is past the exact enumeration's limit ({BYTE_LIMIT})"
        )
    e = np.array([lay.offset], dtype=np.int64)
    for size, stride in zip(lay.sizes, lay.strides, strict=True):
        e = (e[:, None] + np.arange(size, dtype=np.int64)[None, :] * stride).reshape(-1)
    return e


def _bytes(lay: mem.Layout | None) -> np.ndarray:
    """Sorted unique byte offsets a concrete layout covers; :class:`_TooLarge` past
    :data:`BYTE_LIMIT` bytes, :class:`_Undecidable` for a symbolic layout."""
    if lay is None or lay.empty:
        return np.zeros(0, dtype=np.int64)
    if not lay.concrete:
        raise _Undecidable("symbolic layout")
    e = _elements(lay)
    k = lay.itemsize
    return np.unique((e[:, None] * k + np.arange(k, dtype=np.int64)[None, :]).reshape(-1))


def _index_of(lay: mem.Layout, byte: int) -> tuple[int, tuple[int, ...]]:
    """(element, index tuple) of ``lay`` covering ``byte`` (concrete, byte in layout): the
    first index in row-major order, ``()`` when no index reaches it or, past
    :data:`BYTE_LIMIT`, when the element is not the first one (index 0, ..., 0; strides are never negative)."""
    elem = byte // lay.itemsize
    if lay.empty:
        return elem, ()
    try:
        e = _elements(lay)
    except _TooLarge:
        return elem, (0,) * len(lay.sizes) if elem == lay.offset else ()
    hits = np.nonzero(e == elem)[0]
    if not hits.size:
        return elem, ()
    if not lay.sizes:
        return elem, ()
    return elem, tuple(int(i) for i in np.unravel_index(int(hits[0]), lay.sizes))


def _scatter_view(node: torch.fx.Node) -> mem.Layout | None:
    """Layout of the view a scatter node writes into its input (in the input's storage)."""
    gen, igen = _gen_scatter_targets()
    inp = _val(node.args[0])
    if inp is None:
        return None
    if node.target in (gen, igen):
        views = [(v.target, v.args, v.kwargs) for v in node.args[2]]
    else:
        views = [(_SCATTERS[node.target], tuple(node.args[2:]), dict(node.kwargs))]
    fake_mode = getattr(inp, "fake_mode", None)
    if fake_mode is None:
        raise _Undecidable("scatter input has no fake mode")
    with fake_mode:
        t = inp
        for target, args, kwargs in views:
            args = torch.fx.node.map_arg(args, lambda a: a.meta["val"])
            kwargs = torch.fx.node.map_arg(kwargs, lambda a: a.meta["val"])
            t = target(t, *args, **kwargs)
    return _hinted(mem.layout_of(t, storage=mem.layout_of(inp).storage))


# ---------------------------------------------------------------------------------------
# reads and writes of one node


@dataclass(frozen=True)
class _Access:
    """A read of ``value``'s whole layout, minus the bytes of ``scatter`` (a scatter node
    reads its input everywhere except the view it replaces)."""

    value: torch.fx.Node
    scatter: torch.fx.Node | None = None

    @property
    def bytes(self) -> np.ndarray:
        b = _bytes(_layout(self.value))
        if self.scatter is not None:
            b = np.setdiff1d(b, _bytes(_scatter_view(self.scatter)), assume_unique=True)
        return b


def _tensor_nodes(x: Any) -> list[torch.fx.Node]:
    found: list[torch.fx.Node] = []
    torch.fx.node.map_arg(x, lambda n: found.append(n) or n)
    return found


def _reads(m: torch.fx.Node) -> list[_Access]:
    """What ``m`` reads, as byte sets of the storages of the values it reads."""
    gen, igen = _gen_scatter_targets()
    if m.op == "output":
        return [_Access(v) for v in _tensor_nodes(m.args)]
    if m.op != "call_function":
        return []
    t = m.target
    if _is_view(t) or t in _META_ONLY or t is operator.getitem:
        return []
    if t is aten.copy_.default:
        return [_Access(m.args[1])]
    if t is gen or t is igen or t in _SCATTERS:
        return [_Access(m.args[0], m), _Access(m.args[1])]
    return [_Access(v) for v in _tensor_nodes((m.args, m.kwargs))]


def _epilogue_write(m: torch.fx.Node) -> torch.fx.Node | None:
    """The destination when ``m`` is a ``copy_`` into a graph input (or a view of one)."""
    if m.op == "call_function" and m.target is aten.copy_.default:
        return m.args[0]
    return None


def on_storage(node: Any, storage: Any) -> bool:
    """Whether FX value ``node`` is a tensor on ``storage`` (a StorageWeakRef)."""
    s = _storage_of(node)
    return s is not None and storage is not None and s == storage


def _storage_of(node: Any) -> Any:
    lay = _layout(node)
    return None if lay is None else lay.storage


def _hit(access: np.ndarray, f: np.ndarray) -> int | None:
    common = np.intersect1d(access, f, assume_unique=True)
    return int(common[0]) if common.size else None
