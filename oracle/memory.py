"""The exact memory model of strided storage: do two views share a byte, and with what indices.

A :class:`Layout` is one strided view of a storage: offset, sizes and strides in elements of
its own ``itemsize``, so that ``view(dtype)`` views of one storage compare in bytes. Element
``i`` (an index tuple with ``0 <= i_k < sizes[k]``) covers the bytes
``[e * itemsize, e * itemsize + itemsize)`` with ``e = offset + sum(i_k * strides[k])``,
which is how ``TensorImpl`` addresses memory (c10/core/TensorImpl.h, ``data_ptr`` plus
``storage_offset`` and strides).

Answers are exact, never "same storage, so they overlap". Concrete layouts go through exact
fast paths (byte intervals, identical layouts, enumeration of small footprints with numpy)
before Z3. Symbolic layouts (sympy expressions, what ``SymInt.node.expr`` carries) are
decided by Z3 under the given guards; for them OVERLAPS means "overlap for some values of
the symbols that satisfy the guards" (the witness says which), DISJOINT means "for all of
them". A solver timeout or an expression outside :mod:`._z3util`'s fragment gives UNKNOWN.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import sympy

from aliasfuzz.errors import InvalidArgument

from . import _memruns, _z3util

__all__ = [
    "Cover",
    "Coverage",
    "Layout",
    "Overlap",
    "Status",
    "Witness",
    "covers",
    "guards_of",
    "layout_of",
    "overlap",
    "self_overlap",
]

Expr = int | sympy.Basic
Method = Literal["auto", "z3", "enumerate"]


def _norm(e: Any) -> Expr:
    if isinstance(e, bool):
        raise InvalidArgument(f"layout entry must be an integer expression, got {e!r}")
    if isinstance(e, int):
        return e
    node = getattr(e, "node", None)  # torch.SymInt
    if node is not None and hasattr(node, "expr"):
        e = node.expr
    if isinstance(e, sympy.Integer):
        return int(e)
    if isinstance(e, sympy.Basic):
        return e
    raise InvalidArgument(f"layout entry must be an int or sympy expression, got {e!r}")


@dataclass(frozen=True)
class Layout:
    """One strided view of a storage.

    ``storage`` is any hashable identity (equal values = same storage). ``offset``, ``sizes``
    and ``strides`` are ints or sympy integer expressions, in elements of ``itemsize`` bytes.
    Raises InvalidArgument on mismatched ranks, a non-positive itemsize, or a negative
    concrete size or offset.
    """

    storage: Hashable
    offset: Expr
    sizes: tuple[Expr, ...]
    strides: tuple[Expr, ...]
    itemsize: int

    def __post_init__(self) -> None:
        sizes = tuple(_norm(s) for s in self.sizes)
        strides = tuple(_norm(s) for s in self.strides)
        offset = _norm(self.offset)
        if len(sizes) != len(strides):
            raise InvalidArgument(f"layout has {len(sizes)} sizes but {len(strides)} strides")
        if not isinstance(self.itemsize, int) or self.itemsize <= 0:
            raise InvalidArgument(f"itemsize must be a positive int, got {self.itemsize!r}")
        if any(isinstance(s, int) and s < 0 for s in sizes):
            raise InvalidArgument(f"negative size in {sizes}")
        if isinstance(offset, int) and offset < 0:
            raise InvalidArgument(f"negative storage offset {offset}")
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "strides", strides)
        object.__setattr__(self, "offset", offset)

    @property
    def concrete(self) -> bool:
        """Whether offset, sizes and strides are all plain ints."""
        return all(isinstance(x, int) for x in (self.offset, *self.sizes, *self.strides))

    @property
    def empty(self) -> bool:
        """Whether some size is the literal 0 (a symbolic size may still be 0 at run time)."""
        return any(isinstance(s, int) and s == 0 for s in self.sizes)


class Status(enum.Enum):
    """Answer of an overlap query."""

    OVERLAPS = "overlaps"
    DISJOINT = "disjoint"
    UNKNOWN = "unknown"


class Coverage(enum.Enum):
    """Answer of a coverage query (:func:`covers`)."""

    COVERS = "covers"
    NOT_COVERED = "not-covered"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Witness:
    """A shared byte: its storage byte offset, the index tuple and element (in each view's
    own dtype, counted from the storage start) of each view that covers it, and the values of
    the shape symbols (``env``) under which this happens (empty for concrete layouts).

    For :func:`covers`, ``index_b``/``element_b`` name a byte of ``b`` that ``a`` misses and
    ``index_a`` is ``()``, ``element_a`` is ``None``.
    """

    byte: int
    index_a: tuple[int, ...]
    index_b: tuple[int, ...]
    element_a: int | None = None
    element_b: int | None = None
    env: Mapping[str, int] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Overlap:
    """Result of :func:`overlap` / :func:`self_overlap`; ``witness`` is set iff OVERLAPS."""

    status: Status
    witness: Witness | None
    reason: str


@dataclass(frozen=True)
class Cover:
    """Result of :func:`covers`; ``witness`` (a missed byte of b) is set iff NOT_COVERED."""

    status: Coverage
    witness: Witness | None
    reason: str


# ---------------------------------------------------------------------------------------
# concrete helpers


def _numel(lay: Layout) -> int:
    return math.prod(lay.sizes)


def _extent(lay: Layout) -> tuple[int, int]:
    """(first, last) element of a non-empty concrete layout."""
    lo = hi = lay.offset
    for size, stride in zip(lay.sizes, lay.strides, strict=True):
        span = (size - 1) * stride
        lo, hi = (lo + span, hi) if span < 0 else (lo, hi + span)
    return lo, hi


def _extreme_index(lay: Layout, last: bool) -> tuple[int, ...]:
    return tuple(
        (s - 1) if (st > 0) == last and st != 0 else 0
        for s, st in zip(lay.sizes, lay.strides, strict=True)
    )


def _element(lay: Layout, index: Sequence[int]) -> int:
    return lay.offset + sum(i * st for i, st in zip(index, lay.strides, strict=True))


def _witness(a: Layout, b: Layout, ia: Sequence[int], ib: Sequence[int], env=None) -> Witness:
    ea, eb = _element(a, ia), _element(b, ib)
    byte = max(ea * a.itemsize, eb * b.itemsize)
    return Witness(byte, tuple(ia), tuple(ib), ea, eb, dict(env or {}))


def _check(method: str, timeout_ms: int, *layouts: Any) -> None:
    for lay in layouts:
        if not isinstance(lay, Layout):
            raise InvalidArgument(f"expected a Layout, got {type(lay).__name__}")
    if method not in ("auto", "z3", "enumerate"):
        raise InvalidArgument(f"method must be auto, z3 or enumerate, got {method!r}")
    if method == "enumerate" and not all(lay.concrete for lay in layouts):
        raise InvalidArgument("method='enumerate' needs concrete layouts")
    if not isinstance(timeout_ms, int) or timeout_ms <= 0:
        raise InvalidArgument(f"timeout_ms must be a positive int, got {timeout_ms!r}")


# ---------------------------------------------------------------------------------------
# overlap


def overlap(
    a: Layout,
    b: Layout,
    *,
    guards: Sequence[sympy.Basic] = (),
    timeout_ms: int = 200,
    method: Method = "auto",
) -> Overlap:
    """Whether some byte of ``a`` is also a byte of ``b``, exactly, with a witness.

    ``guards`` are sympy relations over the shape symbols (e.g. ``s0 >= 2``), used only for
    symbolic layouts. ``method="z3"`` skips the fast paths (for testing), ``"enumerate"``
    forces the run-based exact path whatever the footprint size. Z3 answers are memoized
    (see ``_z3util.query``). Raises InvalidArgument on bad arguments; never raises on a
    hard query (UNKNOWN instead).
    """
    _check(method, timeout_ms, a, b)
    if a.storage != b.storage:
        return Overlap(Status.DISJOINT, None, "different storages")
    if a.empty or b.empty:
        return Overlap(Status.DISJOINT, None, "empty view")
    if method != "z3" and a.concrete and b.concrete:
        (alo, ahi), (blo, bhi) = _extent(a), _extent(b)
        if (ahi + 1) * a.itemsize <= blo * b.itemsize or (bhi + 1) * b.itemsize <= alo * a.itemsize:
            return Overlap(Status.DISJOINT, None, "disjoint byte intervals")
        if (a.offset, a.sizes, a.strides, a.itemsize) == (b.offset, b.sizes, b.strides, b.itemsize):
            zero = (0,) * len(a.sizes)
            return Overlap(Status.OVERLAPS, _witness(a, b, zero, zero), "identical layouts")
        ra, rb = _memruns.Runs(a), _memruns.Runs(b)
        if method == "enumerate" or _memruns.affordable(ra, rb):
            hit = _memruns.overlap(ra, rb)
            if hit is None:
                return Overlap(Status.DISJOINT, None, "runs: no shared byte")
            return Overlap(Status.OVERLAPS, _witness(a, b, hit[1], hit[2]), "runs")
    return _from_answer(_z3util.query("overlap", a, b, guards, timeout_ms))


def _answer_witness(ans: _z3util.Answer) -> Witness | None:
    if ans.result != "sat":
        return None
    return Witness(ans.byte, ans.index_a, ans.index_b, ans.element_a, ans.element_b, dict(ans.env))


def _from_answer(ans: _z3util.Answer) -> Overlap:
    status = {"sat": Status.OVERLAPS, "unsat": Status.DISJOINT}.get(ans.result)
    return Overlap(status or Status.UNKNOWN, _answer_witness(ans), ans.reason)


# ---------------------------------------------------------------------------------------
# self-overlap


def self_overlap(
    a: Layout,
    *,
    guards: Sequence[sympy.Basic] = (),
    timeout_ms: int = 200,
    method: Method = "auto",
) -> Overlap:
    """Whether two distinct index tuples of ``a`` hit one byte (as_strided / expand aliasing).

    The witness holds both index tuples (``index_a != index_b``). Same arguments and errors
    as :func:`overlap`. Mirrors what ``at::has_internal_overlap`` (aten/src/ATen/MemoryOverlap.cpp)
    approximates, but exactly.
    """
    _check(method, timeout_ms, a)
    if a.empty:
        return Overlap(Status.DISJOINT, None, "empty view")
    if method != "z3" and a.concrete:
        for k, (size, stride) in enumerate(zip(a.sizes, a.strides, strict=True)):
            if size > 1 and stride == 0:
                ib = tuple(1 if j == k else 0 for j in range(len(a.sizes)))
                return Overlap(
                    Status.OVERLAPS, _witness(a, a, (0,) * len(a.sizes), ib), "zero stride"
                )
        if _sorted_injective(a):
            return Overlap(Status.DISJOINT, None, "strides nest (non-overlapping)")
        ra = _memruns.Runs(a)
        if method == "enumerate" or _memruns.affordable(ra):
            hit = _memruns.self_overlap(ra)
            if hit is None:
                return Overlap(Status.DISJOINT, None, "runs: all elements distinct")
            return Overlap(Status.OVERLAPS, _witness(a, a, hit[1], hit[2]), "runs")
    return _from_answer(_z3util.query("self", a, a, guards, timeout_ms))


def _sorted_injective(a: Layout) -> bool:
    # Sufficient condition: ordered by |stride|, each stride exceeds the reach of the smaller
    # dimensions, so the map from index tuples to elements is injective.
    reach = 0
    for size, stride in sorted(
        ((s, abs(st)) for s, st in zip(a.sizes, a.strides, strict=True) if s > 1),
        key=lambda p: p[1],
    ):
        if stride <= reach:
            return False
        reach += stride * (size - 1)
    return True


# ---------------------------------------------------------------------------------------
# coverage


def covers(
    a: Layout,
    b: Layout,
    *,
    guards: Sequence[sympy.Basic] = (),
    timeout_ms: int = 200,
    method: Method = "auto",
) -> Cover:
    """Whether every byte of ``b`` lies in ``a`` (e.g. "the program overwrites the input there").

    An empty ``b`` is covered by anything. For symbolic layouts COVERS means "for all values
    of the symbols under the guards"; NOT_COVERED comes with a witness byte of ``b`` outside
    ``a`` (and the symbol values). Decided by intervals, enumeration or a Z3 ``ForAll``.
    """
    _check(method, timeout_ms, a, b)
    if b.empty:
        return Cover(Coverage.COVERS, None, "b is empty")
    if method != "z3" and b.concrete and (a.storage != b.storage or a.empty):
        zero = (0,) * len(b.sizes)
        return Cover(Coverage.NOT_COVERED, _miss(b, zero), "a is empty or on another storage")
    if method != "z3" and a.concrete and b.concrete:
        (alo, ahi), (blo, bhi) = _extent(a), _extent(b)
        if blo * b.itemsize < alo * a.itemsize:
            return Cover(
                Coverage.NOT_COVERED, _miss(b, _extreme_index(b, False)), "b starts before a"
            )
        if (bhi + 1) * b.itemsize > (ahi + 1) * a.itemsize:
            return Cover(
                Coverage.NOT_COVERED, _miss(b, _extreme_index(b, True), last=True), "b ends after a"
            )
        if ahi - alo + 1 == _numel(a) and _sorted_injective(a):
            return Cover(Coverage.COVERS, None, "a is dense over its interval")
        ra, rb = _memruns.Runs(a), _memruns.Runs(b)
        if method == "enumerate" or (_memruns.affordable(ra) and _memruns.affordable(rb, ra)):
            miss = _memruns.cover(ra, rb)
            if miss is None:
                return Cover(Coverage.COVERS, None, "runs")
            byte, index = miss
            return Cover(
                Coverage.NOT_COVERED, Witness(byte, (), index, None, _element(b, index)), "runs"
            )
    if a.storage != b.storage:  # not covered iff b has an element for some symbol values
        ans = _z3util.query("overlap", b, b, guards, timeout_ms)
        ans = dataclasses.replace(ans, index_a=(), element_a=None)
    else:
        kind = "dense-cover" if _row_major(a) else "cover"
        ans = _z3util.query(kind, a, b, guards, timeout_ms)
    status = {"sat": Coverage.NOT_COVERED, "unsat": Coverage.COVERS}.get(ans.result)
    return Cover(status or Coverage.UNKNOWN, _answer_witness(ans), ans.reason)


def _row_major(a: Layout) -> bool:
    """Whether a's strides are the contiguous ones for its sizes (symbolically)."""
    expect: Expr = 1
    for size, stride in reversed(list(zip(a.sizes, a.strides, strict=True))):
        if size != 1 and sympy.expand(sympy.sympify(stride) - expect) != 0:
            return False
        expect = expect * size
    return True


def _miss(b: Layout, index: tuple[int, ...], last: bool = False) -> Witness:
    e = _element(b, index)
    byte = e * b.itemsize + (b.itemsize - 1 if last else 0)
    return Witness(byte, (), index, None, e)


def layout_of(t: Any, storage: Hashable | None = None) -> Layout:
    """The Layout of a real or Fake ``torch.Tensor`` (SymInts become their sympy expressions).

    ``storage`` defaults to ``StorageWeakRef(t.untyped_storage())``, the identity Inductor's
    reinplace pass uses (torch/_inductor/fx_passes/reinplace.py ``get_node_storage``).
    Raises InvalidArgument for a non-strided tensor or a non-tensor.
    """
    import torch
    from torch.multiprocessing.reductions import StorageWeakRef

    if not isinstance(t, torch.Tensor):
        raise InvalidArgument(f"layout_of needs a tensor, got {type(t).__name__}")
    if t.layout != torch.strided:
        raise InvalidArgument(f"layout_of needs a strided tensor, got {t.layout}")
    if storage is None:
        storage = StorageWeakRef(t.untyped_storage())
    return Layout(storage, t.storage_offset(), tuple(t.shape), tuple(t.stride()), t.element_size())


def guards_of(shape_env: Any) -> list[sympy.Basic]:
    """The shape guards of a ``torch.fx.experimental.symbolic_shapes.ShapeEnv`` as sympy
    relations: its recorded guards (``shape_env.guards[i].expr``) and the finite bounds of
    each symbol's value range (``shape_env.var_to_range``, e.g. ``s0 >= 2``).
    """
    out: list[sympy.Basic] = [g.expr for g in getattr(shape_env, "guards", ())]
    for sym, vr in getattr(shape_env, "var_to_range", {}).items():
        for bound, rel in ((vr.lower, sympy.Ge), (vr.upper, sympy.Le)):
            if isinstance(bound, sympy.Integer) or isinstance(bound, int):
                out.append(rel(sym, int(bound)))
    return out
