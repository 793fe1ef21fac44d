"""The bytes a program needs: a lower bound on the memory traffic of any correct compilation.

Eager is run once under a ``TorchDispatchMode`` that sees every aten call with real tensors
and records, on the storages of the program's inputs, which elements each call reads and
writes (footprints: ``storage_offset + sum(i_k * stride_k)`` of each tensor argument, in
bytes). The program needs, in the memory model of DESIGN.md (every mutation done in
place, every intermediate kept in registers or fused away):

* each input element it reads before writing it, once (a value the program wrote itself
  needs no load);
* each input element it writes, once;
* each fresh output, written once (an output that is a view of an input costs nothing).

Which argument an op writes comes from its schema (``alias_info.is_write``, as
:mod:`aliasfuzz.fuzz.ops.schema`); a written argument is also read unless the op only
stores into it (:data:`_STORE_ONLY`: ``copy_``, ``fill_``, ``zero_``, ``out=`` arguments,
the target of ``index_put_``). View ops and metadata read nothing. Indexing ops read or
write only the indexed elements (:data:`_INDEXED`, exact: the op is replayed on the
tensor of its argument's element offsets). Every other op reads its whole argument, an
over-approximation: the bound can only grow by it, so a compiled/needed ratio is never
overstated. A footprint of more than :data:`LIMIT` elements is not enumerated: no bound.

``compiled / needed`` is the ratio the judge records for full ``inductor`` runs
(:func:`aliasfuzz.passes.cost.inductor_cost` gives the compiled side).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

__all__ = ["LIMIT", "Needed", "needed_bytes"]

aten = torch.ops.aten

#: Most elements one footprint is enumerated into (int64 byte addresses: 8 B x item size each).
LIMIT = 1 << 20

#: Ops whose written arguments are stored into without being read first.
_STORE_ONLY = {aten.copy_.default, aten.fill_.Scalar, aten.fill_.Tensor, aten.zero_.default,
               aten.index_put_.default, aten._index_put_impl_.default}

_META = {aten.sym_size.int, aten.sym_stride.int, aten.sym_numel.default,
         aten.sym_storage_offset.default, aten.size.default, aten.stride.default,
         aten.is_same_size.default, aten._local_scalar_dense.default}


@dataclass(frozen=True)
class Needed:
    """Lower bound (bytes) on what a program must move: ``reads`` of input elements,
    ``writes`` of input elements, ``outputs`` (fresh outputs); ``bytes`` their sum."""

    reads: int
    writes: int
    outputs: int

    @property
    def bytes(self) -> int:
        return self.reads + self.writes + self.outputs

    def to_json(self) -> dict[str, int]:
        return {"bytes": self.bytes, "reads": self.reads, "writes": self.writes, "outputs": self.outputs}


class _TooLarge(Exception):
    pass


def _key(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def _offsets(t: torch.Tensor) -> torch.Tensor:
    """Element offsets (in elements of ``t``'s dtype) of ``t``'s footprint, shaped as ``t``."""
    if t.numel() > LIMIT:
        raise _TooLarge
    span = t.storage_offset() + sum((n - 1) * s for n, s in zip(t.shape, t.stride(), strict=True)) + 1
    base = torch.arange(max(span, 1), dtype=torch.int64)
    return base.as_strided(t.shape, t.stride(), t.storage_offset())


def _bytes_of(t: torch.Tensor, offsets: torch.Tensor) -> np.ndarray:
    """Byte addresses (in the storage) covered by elements at ``offsets`` of ``t``'s dtype."""
    item = t.element_size()
    starts = offsets.reshape(-1).numpy() * item
    return (starts[:, None] + np.arange(item)[None, :]).reshape(-1)


def _indexed(func: Any, args: Sequence[Any]) -> dict[int, torch.Tensor] | None:
    """For an indexing op, ``{argument position: element offsets it touches}``."""
    if func in (aten.index.Tensor, aten.index_put_.default, aten.index_put.default,
                aten._index_put_impl_.default, aten._unsafe_index_put.default):
        offs = _offsets(args[0])
        return {0: offs[tuple(args[1])]}
    if func is aten.index_select.default:
        return {0: _offsets(args[0]).index_select(args[1], args[2])}
    return None


class _Recorder(TorchDispatchMode):
    def __init__(self, storages: set[int]):
        super().__init__()
        self.storages = storages
        self.read: dict[int, np.ndarray] = {}  # sorted unique byte addresses per storage
        self.written: dict[int, np.ndarray] = {}

    def _touch(self, t: torch.Tensor, offsets: torch.Tensor, write: bool) -> None:
        k = _key(t)
        if k not in self.storages:
            return
        addrs = np.unique(_bytes_of(t, offsets))
        empty = np.empty(0, dtype=np.int64)
        if write:
            self.written[k] = np.union1d(self.written.get(k, empty), addrs)
        else:
            fresh = np.setdiff1d(addrs, self.written.get(k, empty), assume_unique=True)
            self.read[k] = np.union1d(self.read.get(k, empty), fresh)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _META or func.is_view:
            return func(*args, **kwargs)
        schema = func._schema
        indexed = _indexed(func, args) or {}
        bound = list(args) + [kwargs.get(a.name) for a in schema.arguments[len(args):]]
        writes = []
        for i, (a, v) in enumerate(zip(schema.arguments, bound, strict=False)):
            tensors = [t for t in tree_flatten(v)[0] if isinstance(t, torch.Tensor)]
            is_write = a.alias_info is not None and a.alias_info.is_write
            for t in tensors:
                offs = indexed.get(i) if isinstance(v, torch.Tensor) else None
                offs = _offsets(t) if offs is None else offs
                if not is_write or (func not in _STORE_ONLY and not a.kwarg_only):
                    self._touch(t, offs, write=False)
                if is_write:
                    writes.append((t, offs))
        for t, offs in writes:
            self._touch(t, offs, write=True)
        return func(*args, **kwargs)


def needed_bytes(fn: Callable, inputs: Sequence[Any]) -> Needed | None:
    """The lower bound for ``fn(*inputs)`` (``inputs`` are used and mutated as given);
    None when eager raises or a footprint exceeds :data:`LIMIT` elements."""
    tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
    storages = {_key(t) for t in tensors}
    rec = _Recorder(storages)
    try:
        with rec:
            ret = fn(*inputs)
    except _TooLarge:
        return None
    except Exception:  # noqa: BLE001 - eager's own failure is judged elsewhere
        return None
    outs = [t for t in tree_flatten(ret)[0] if isinstance(t, torch.Tensor)]
    fresh, seen = 0, set()
    for t in outs:
        if _key(t) in storages or id(t) in seen:
            continue
        seen.add(id(t))
        fresh += t.numel() * t.element_size()
    return Needed(sum(map(len, rec.read.values())), sum(map(len, rec.written.values())), fresh)
