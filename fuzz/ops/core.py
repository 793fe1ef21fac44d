"""The op registry's building blocks: op kinds, abstract values and op definitions.

An :class:`OpDef` is one row of the registry table: the op's name, kind, arity, its shape
/ dtype / alias rule (``infer``), which arguments it reads and writes (footprints), how it
runs (``apply``, torch code) and how it renders to Python (``render``). Abstract values
(:class:`ValueMeta`) carry exactly what the alias model needs: the storage a value lives
on and its strided layout there (offset, sizes, strides in elements of its dtype).

Mirrors: a view's layout rules are those of ``aten/src/ATen/native/TensorShape.cpp``
(``select``, ``slice``, ``transpose``, ``as_strided``, ...), checked op by op against
PyTorch in ``tests/unit/test_alias_rules.py``.
"""

from __future__ import annotations

import enum
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ir import DTYPES, contiguous_strides

__all__ = [
    "ENUM_LIMIT",
    "Draw",
    "NoEagerMeaning",
    "OpDef",
    "OpKind",
    "ValueMeta",
    "broadcast_shapes",
    "fresh",
    "norm_dim",
]


#: Above this many elements (or program lanes), element-by-element checks and byte sets are
#: skipped, or refused with a reason (:meth:`ValueMeta.elements`): generated programs stay
#: far below it, so they are always checked exactly.
ENUM_LIMIT = 1 << 16


class NoEagerMeaning(InvalidArgument):
    """A well-formed statement whose eager result PyTorch leaves undefined (or refuses), or
    whose observed result no PyTorch contract promises (``layout-readout``).

    ``rule`` is the stable name of the rule that rejects it (``overlapping-writes``,
    ``partial-read-write-overlap``, ...: :data:`aliasfuzz.fuzz.validate.RULE_NAMES`),
    ``summary`` the rule's fixed one-line reason, ``detail`` where and why; the message is
    ``"summary; detail"``, so that a report counting reasons by their first clause counts
    rules.
    """

    def __init__(self, rule: str, summary: str, detail: str = ""):
        super().__init__(f"{summary}; {detail}" if detail else summary)
        self.rule, self.summary, self.detail = rule, summary, detail

    def at(self, where: str) -> NoEagerMeaning:
        """The same rejection with ``where`` (``"statement 3 (add_)"``) before the detail."""
        return NoEagerMeaning(self.rule, self.summary, f"{where}: {self.detail}" if self.detail else where)


class OpKind(enum.Enum):
    """What an op does to memory; the order is the registry's listing order."""

    VIEW = "view"  # returns aliases of an argument (same storage)
    FUNCTIONAL = "functional"  # returns fresh storage, reads its arguments
    FACTORY = "factory"  # returns fresh storage, reads nothing
    INPLACE = "inplace"  # writes into an argument, returns it
    OUT = "out"  # ``out=`` form: writes into the ``out`` argument, returns it
    SCATTER = "scatter"  # functional scatter: a fresh copy of self with a part replaced
    CUSTOM = "custom"  # torch.library custom op, possibly with ``mutates_args``
    TRITON = "triton"  # a user Triton kernel launch
    CONTROL = "control"  # data-dependent control flow (a graph break under Dynamo)


@dataclass(frozen=True)
class ValueMeta:
    """An abstract tensor value: its dtype and its strided layout on a storage.

    ``storage`` identifies the storage: an input storage's name, or the name of the
    statement result that allocated fresh memory. ``offset`` and ``stride`` are in
    elements of ``dtype``; ``storage_nbytes`` is the storage's size in bytes.
    """

    shape: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int
    dtype: str
    storage: str
    storage_nbytes: int

    @property
    def itemsize(self) -> int:
        return DTYPES[self.dtype]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def is_float(self) -> bool:
        return self.dtype in ("float32", "float64", "float16", "bfloat16")

    def elements(self) -> frozenset[int]:
        """The footprint: storage element indices covered (brute force).

        Raises :class:`InvalidArgument` past :data:`ENUM_LIMIT` elements: enumerating a
        large view would exhaust memory (a frozenset of 10**8 ints takes gigabytes), and a
        program the checks cannot decide is rejected with that reason, never guessed.
        """
        if self.numel > ENUM_LIMIT:
            raise InvalidArgument(
                f"a view of {self.numel} elements is too large to check element by element "
                f"(limit {ENUM_LIMIT})"
            )
        ranges = [range(n) for n in self.shape]
        return frozenset(
            self.offset + sum(i * s for i, s in zip(idx, self.stride, strict=False))
            for idx in itertools.product(*ranges)
        )

    def byte_footprint(self) -> frozenset[int]:
        """The footprint in bytes of the storage (brute force; :class:`InvalidArgument` past
        :data:`ENUM_LIMIT` elements, as :meth:`elements`)."""
        k = self.itemsize
        return frozenset(b for e in self.elements() for b in range(e * k, e * k + k))

    def has_internal_overlap(self) -> bool:
        """Whether two index tuples map to one element (PyTorch refuses writes there).

        Exact: decided by stride arithmetic when it can be (:func:`.overlap.self_overlap`),
        else by enumerating every element (:meth:`elements`: :class:`InvalidArgument` past
        :data:`ENUM_LIMIT` elements, never a guess)."""
        from aliasfuzz.fuzz.ops.overlap import self_overlap

        ans = self_overlap(self).overlaps
        return ans if ans is not None else len(self.elements()) != self.numel

    def is_contiguous(self) -> bool:
        return all(
            n <= 1 or s == c for n, s, c in zip(self.shape, self.stride, contiguous_strides(self.shape), strict=False)
        )

    def view(self, shape: Sequence[int], stride: Sequence[int], offset: int) -> ValueMeta:
        """A view of this value on the same storage with another layout."""
        return replace(self, shape=tuple(shape), stride=tuple(stride), offset=offset)


def fresh(name: str, shape: Sequence[int], dtype: str) -> ValueMeta:
    """The abstract value of a freshly allocated contiguous tensor bound to ``name``."""
    shape = tuple(shape)
    return ValueMeta(
        shape=shape,
        stride=contiguous_strides(shape),
        offset=0,
        dtype=dtype,
        storage=name,
        storage_nbytes=math.prod(shape) * DTYPES[dtype],
    )


def norm_dim(dim: Any, ndim: int, what: str = "dim") -> int:
    """Wrap a possibly negative ``dim`` into ``[0, ndim)`` as ``c10::maybe_wrap_dim`` does."""
    n = max(ndim, 1)
    if not isinstance(dim, int) or isinstance(dim, bool) or not -n <= dim < n:
        raise InvalidArgument(f"{what} {dim!r} out of range for a {ndim}-d tensor")
    return dim % n


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """Broadcast shapes as ``torch.broadcast_shapes``; raise InvalidArgument if impossible."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        sizes = {s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            raise InvalidArgument(f"shapes {list(map(tuple, shapes))} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


class Draw(Protocol):
    """What an op's parameter generator may ask for; the strategies adapt Hypothesis to it.

    Generators draw values where they are used and keep rare cases behind ``boolean``
    draws, so that shrinking moves toward small, common parameters.
    """

    def integer(self, lo: int, hi: int) -> int: ...  # inclusive bounds, shrinks toward lo
    def boolean(self, p: float = 0.5) -> bool: ...  # shrinks toward False
    def choice(self, options: Sequence[Any]) -> Any: ...  # shrinks toward options[0]
    def scalar(self, dtype: str) -> int | float | bool: ...  # a small value of that dtype


InferFn = Callable[[Sequence[ValueMeta], dict[str, Any], Sequence[str]], tuple[ValueMeta, ...]]
ApplyFn = Callable[[Sequence[Any], dict[str, Any]], Any]
RenderFn = Callable[[Sequence[str], dict[str, Any]], str]


@dataclass(frozen=True)
class OpDef:
    """One row of the op registry.

    Fields:
      name: registry key, as written in :class:`~aliasfuzz.fuzz.ir.Op` ``op``.
      kind: :class:`OpKind`.
      arity: number of tensor arguments, or ``(min, max)`` for variadic ops.
      infer: ``(arg metas, params, out names) -> result metas``; the dtype, shape and alias
        rule. Raises :class:`InvalidArgument` when PyTorch would reject the call.
      apply: ``(tensors, params) -> result``; the torch code, used by the interpreter.
      render: ``(argument expressions, params) -> Python source``; an expression when
        ``statement`` is False, else a full statement (``x[1] = y``).
      mutates: indices of the tensor arguments written (``None`` for variadic: all; a
        negative index counts from the end).
      reads: indices of the tensor arguments read (``None``: all).
      n_out: results bound by a statement (``None``: given by params, e.g. ``unbind``).
      prelude: names of module-level definitions (custom ops, kernels) the rendering needs.
      writes: optional ``(arg metas, params) -> written metas`` when an op writes only part
        of its mutated argument (setitem through basic indexing).
      scriptable: whether the rendering is valid TorchScript.
      gen: optional ``(draw, arg metas) -> params`` drawing valid parameters for arguments
        already chosen; ops without one are never generated (hand-written programs only).
        It may raise :class:`~aliasfuzz.errors.GenerationFailure` when these arguments
        admit no parameters; the generator then picks something else.
      accepts: optional ``(arg metas) -> bool`` filter on argument tuples for the generator.
      tags: labels others rely on. ``group:<name>`` (the generator draws the rows of one
        group as one choice of its family); ``accepts_none`` (an argument may be None);
        ``maybe_alias`` (a functional row that returns an argument itself in some layouts:
        ``contiguous``); ``maybe_copy`` (a view row that returns fresh memory in some layouts:
        ``reshape``); ``data_dependent`` (what it writes depends on tensor contents: the
        footprint is an upper bound); ``observes_layout`` (returns its argument's layout as
        data: the ``layout-readout`` validation rule of :mod:`aliasfuzz.fuzz.layout_contract`
        restricts its arguments); ``alias_beyond_schema`` (eager returns its argument itself
        although the ATen schema declares a fresh result: ``aten::dropout`` with
        ``train=False``; TorchScript's alias analysis follows the schema, see
        :func:`aliasfuzz.oracle.judge.schema_alias_only`); ``pairs`` (a variadic row whose arguments are two lists of
        equal length: the generator draws an even number); ``base_only`` (its argument must be
        a base, not a view: ``detach_``, :func:`aliasfuzz.fuzz.ops.metadata.is_base`);
        ``twin_only`` (a row the IR twin of a shared case needs, not drawn yet: drawing it
        changes every seed's programs, so it comes with the generator's next breadth step). For ``maybe_alias`` / ``maybe_copy`` rows, ``infer``'s
        result ``storage`` always says which case holds.
      count_out: for ``n_out=None`` ops, ``(arg metas, params) -> int``: how many names a
        statement with these arguments and parameters must bind (``split``, ``unbind``).
    """

    name: str
    kind: OpKind
    arity: int | tuple[int, int]
    infer: InferFn
    apply: ApplyFn
    render: RenderFn
    mutates: tuple[int, ...] | None = ()
    reads: tuple[int, ...] | None = None
    n_out: int | None = 1
    statement: bool = False
    prelude: tuple[str, ...] = ()
    writes: Callable[[Sequence[ValueMeta], dict[str, Any]], list[ValueMeta]] | None = None
    scriptable: bool = True
    doc: str = ""
    tags: frozenset[str] = field(default_factory=frozenset)
    gen: Callable[[Draw, Sequence[ValueMeta]], dict[str, Any]] | None = None
    accepts: Callable[[Sequence[ValueMeta]], bool] | None = None
    count_out: Callable[[Sequence[ValueMeta], dict[str, Any]], int] | None = None

    def check_arity(self, n: int) -> None:
        lo, hi = (self.arity, self.arity) if isinstance(self.arity, int) else self.arity
        if not lo <= n <= hi:
            want = lo if lo == hi else f"{lo}..{hi}"
            raise InvalidArgument(f"{self.name} takes {want} tensor arguments, got {n}")

    def mutated_indices(self, n_args: int) -> tuple[int, ...]:
        """Indices of the arguments written: ``mutates`` (a negative index counts from the
        end: a variadic row's last argument is -1), or for a variadic row (``None``) all of
        them, or the first list of a ``pairs`` row."""
        if self.mutates is not None:
            return tuple(i if i >= 0 else n_args + i for i in self.mutates)
        return tuple(range(n_args // 2 if "pairs" in self.tags else n_args))

    def read_indices(self, n_args: int) -> tuple[int, ...]:
        return tuple(range(n_args)) if self.reads is None else self.reads

    def written(self, metas: Sequence[ValueMeta], params: dict[str, Any]) -> list[ValueMeta]:
        """The layouts this op writes (whole mutated arguments unless ``writes`` narrows)."""
        if self.writes is not None:
            return self.writes(metas, params)
        return [metas[i] for i in self.mutated_indices(len(metas))]
