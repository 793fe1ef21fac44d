"""Semantic validation: abstract interpretation of a program over :class:`ValueMeta`.

:func:`infer` walks the body once, applying each registry row's shape/dtype/alias rule,
and rejects what PyTorch would reject (:class:`InvalidArgument`: unknown ops, wrong arity,
undefined or rebound names, out-of-bounds inputs, what an op's own rule refuses) and what
has no single eager meaning (:class:`NoEagerMeaning`, an ``InvalidArgument`` that carries the
name of the rule it breaks).

One eager meaning is decided generally, by one rule table (:data:`RULES`) over what each
statement writes and reads: the written operands come from the op's schema (alias
annotations ``Tensor(a!)``, ``Tensor(a!)[]``, ``out=``: :mod:`aliasfuzz.fuzz.ops.schema`),
narrowed by the row's ``writes`` where it writes part of an operand; footprints are compared
exactly (:mod:`aliasfuzz.fuzz.ops.overlap`), and a comparison too large to enumerate rejects
conservatively. The rules, their PyTorch sources and their exemptions are documented in
``oracle/README.md`` ("One eager meaning"). One more rule is about what PyTorch promises
rather than what eager means: ``layout-readout`` (:mod:`aliasfuzz.fuzz.layout_contract`), an
op that reads layout as data (``observes_layout``) on a tensor whose layout no contract
promises.

Index tensors that are program values (``x[rows] = v``: :mod:`aliasfuzz.fuzz.ops._advindex`)
are checked for bounds and repeats where their contents are known: integer inputs whose
storage ``init`` fixes their elements (``values``, ``arange``, ``zeros``, ``ones``), until a
statement writes that storage (:func:`_known_inputs`); computed index tensors are not.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz import gradflow
from aliasfuzz.fuzz.ir import Op, Program
from aliasfuzz.fuzz.layout_contract import LAYOUT_READOUT, LayoutReads
from aliasfuzz.fuzz.ops import lookup
from aliasfuzz.fuzz.ops._advindex import INDEX_START, check_known_indices
from aliasfuzz.fuzz.ops.core import ENUM_LIMIT, NoEagerMeaning, OpDef, OpKind, ValueMeta
from aliasfuzz.fuzz.ops.metadata import BASE_ONLY, GRAD_LEAF, is_base, retires
from aliasfuzz.fuzz.ops.metadata import TAG as METADATA_TAG
from aliasfuzz.fuzz.ops.overlap import overlap, same_layout, self_overlap
from aliasfuzz.fuzz.ops.schema import written_operands
from aliasfuzz.fuzz.ops.views import BOOL_BYTES

__all__ = ["RULES", "RULE_NAMES", "NoEagerMeaning", "Rule", "Step", "Typed", "check_rules", "infer"]


@dataclass(frozen=True)
class Step:
    """One statement with the abstract values it consumed and produced."""

    index: int
    op: Op
    opdef: OpDef
    args: tuple[ValueMeta | None, ...]
    outs: tuple[ValueMeta | None, ...]


@dataclass(frozen=True)
class Typed:
    """The result of :func:`infer`: every name's abstract value, and the typed steps.
    ``unreturnable``: names the program may not return (``layout-readout``: as_strided views
    whose storage was written after they were taken; retired names), for the generator's
    outputs. ``retired``: names of an object whose metadata a later statement changed
    (``t_``, ``squeeze_``, ...: :mod:`aliasfuzz.fuzz.ops.metadata`); no statement after
    that may read them, and their value here is their layout before the change."""

    values: dict[str, ValueMeta | None]
    steps: tuple[Step, ...]
    unreturnable: frozenset[str] = frozenset()
    retired: frozenset[str] = frozenset()

    def input_storages(self, program: Program) -> set[str]:
        return {t.storage for t in program.inputs}


def _input_values(program: Program) -> dict[str, ValueMeta | None]:
    storages = {}
    for s in program.storages:
        if s.name in storages:
            raise InvalidArgument(f"storage {s.name!r} defined twice")
        storages[s.name] = s
    values: dict[str, ValueMeta | None] = {}
    for t in program.inputs:
        if t.name in values or t.name in storages:
            raise InvalidArgument(f"input name {t.name!r} is not unique")
        st = storages.get(t.storage)
        if st is None:
            raise InvalidArgument(f"input {t.name}: unknown storage {t.storage!r}")
        if t.span > st.numel:
            raise InvalidArgument(
                f"input {t.name}: layout reaches element {t.span - 1} of {t.storage} "
                f"({st.numel} elements)"
            )
        if t.requires_grad and st.dtype not in ("float32", "float64", "float16", "bfloat16"):
            raise InvalidArgument(f"input {t.name}: requires_grad needs a floating dtype")
        values[t.name] = (
            None
            if t.none
            else ValueMeta(t.shape, t.stride, t.offset, st.dtype, st.name, st.nbytes)
        )
    return values


# -- one eager meaning -------------------------------------------------------------------
@dataclass(frozen=True)
class Access:
    """What one statement writes and reads, for the rules of :data:`RULES`.

    ``written``: (argument index, layouts written through it) per written operand, the
    operands from the op's schema (:func:`~aliasfuzz.fuzz.ops.schema.written_operands`), the
    layouts narrowed by the row's ``writes`` where it has one and each narrowed layout can be
    told to one operand (else the whole operand: conservative). ``parts``: every layout the
    statement writes (narrowed where the row narrows). ``read``: (argument index, layout) per
    read operand (the row's ``reads``).
    """

    op: Op
    opdef: OpDef
    written: tuple[tuple[int, tuple[ValueMeta, ...]], ...]
    parts: tuple[ValueMeta, ...]
    read: tuple[tuple[int, ValueMeta], ...]


@dataclass(frozen=True)
class Rule:
    """A rule that rejects statements PyTorch gives no single eager meaning (or refuses).

    ``check(access)`` returns why the statement breaks the rule, or None. ``summary`` is the
    rule's fixed one-line reason (what campaigns count); ``source`` the PyTorch code or docs
    that leave the result undefined. Rows of the kinds in ``exempt`` are decided otherwise.
    """

    name: str
    summary: str
    source: str
    check: Callable[[Access], str | None]
    exempt: frozenset[OpKind] = frozenset()


def _undecided(what: str, *metas: ValueMeta) -> str:
    n = max(m.numel for m in metas)
    return f"cannot decide whether {what} ({n} elements, above ENUM_LIMIT): rejected conservatively"


def _self_overlapping_write(a: Access) -> str | None:
    for w in a.parts:
        ans = self_overlap(w)
        if ans.overlaps is None:
            return _undecided("a written layout overlaps itself", w)
        if ans.overlaps:
            return (f"a written layout (shape {w.shape}, stride {w.stride}, offset {w.offset}) "
                    f"reaches byte {ans.byte} of {w.storage} through two indices")
    return None


def _overlapping_writes(a: Access) -> str | None:
    for x, (i, wi) in enumerate(a.written):
        for j, wj in a.written[x + 1:]:
            if a.op.args[i] == a.op.args[j]:  # one tensor twice: even empty, its metadata
                return f"arguments {i} and {j} are the same tensor {a.op.args[i]}, written twice"
            for p in wi:
                for q in wj:
                    ans = overlap(p, q)
                    if ans.overlaps is None:
                        return _undecided(f"written arguments {i} and {j} overlap", p, q)
                    if ans.overlaps:
                        return (f"arguments {i} and {j} are both written and share byte "
                                f"{ans.byte} of {p.storage}")
    return None


def _partial_read_write(a: Access) -> str | None:
    for w in a.parts:
        for j, r in a.read:
            if same_layout(w, r):
                continue  # an operand read and written whole: defined (x.add_(x))
            ans = overlap(w, r)
            if ans.overlaps is None:
                return _undecided(f"argument {j} (read) partially overlaps a written layout", w, r)
            if ans.overlaps:
                return (f"argument {j} is read while the op writes a partially overlapping "
                        f"layout (byte {ans.byte} of {w.storage})")
    return None


#: The one-eager-meaning rules, checked in this order on every statement that writes.
#: Rows decide two more rules themselves, with the layouts only they know: ``racing-lanes``
#: (a user Triton launch whose program instances race on an element, from the launch's
#: exact shadow: fuzz/ops/_kernelgen.py) and ``duplicate-index-writes`` (index_put_ without
#: accumulate or scatter_ from a tensor hitting one element twice: fuzz/ops/inplace.py;
#: index_copy and put without accumulate: fuzz/ops/indexfam.py; index_put_ and setitem with
#: index tensors whose contents are known: fuzz/ops/_advindex.py) and ``bool-bytes`` (a
#: dtype view between bool memory and another dtype: fuzz/ops/views.py).
RULES: tuple[Rule, ...] = (
    Rule(
        "self-overlapping-write",
        "a written operand maps two indices to one element",
        "at::assert_no_internal_overlap (aten/src/ATen/MemoryOverlap.cpp), called for every "
        "output by TensorIteratorBase::compute_mem_overlaps and by in-place kernels",
        _self_overlapping_write,
    ),
    Rule(
        "overlapping-writes",
        "two written operands of one op overlap",
        "foreach kernels (aten/src/ATen/native/ForeachUtils.h can_use_fast_route: "
        "multi_tensor_apply writes every list entry at once, the slow path entry by entry); "
        "compute_mem_overlaps checks outputs against inputs only; distinct alias sets "
        "Tensor(a!), Tensor(b!) of a custom op's schema",
        _overlapping_writes,
        # a launch's writes are its shadow's exact footprint, checked for racing lanes
        # (the same tensor in two written arguments is legal: case b15, PyTorch #196657);
        # control flow runs ordinary statements one after another
        frozenset({OpKind.TRITON, OpKind.CONTROL}),
    ),
    Rule(
        "partial-read-write-overlap",
        "a read operand partially overlaps a written one",
        "at::assert_no_partial_overlap (aten/src/ATen/MemoryOverlap.cpp) in "
        "TensorIteratorBase::compute_mem_overlaps; TooHard layouts pass it unchecked",
        _partial_read_write,
    ),
)

#: Every rule name a rejection may carry: :data:`RULES`, the three rules rows decide,
#: ``layout-readout`` (what PyTorch promises about layout read as data:
#: :mod:`aliasfuzz.fuzz.layout_contract`), and the three autograd rules of
#: :mod:`aliasfuzz.fuzz.gradflow` (``leaf-inplace``, ``autograd-grad``, ``multi-output-view``).
RULE_NAMES: tuple[str, ...] = (
    *(r.name for r in RULES), "racing-lanes", "duplicate-index-writes", BOOL_BYTES, LAYOUT_READOUT,
    gradflow.LEAF_INPLACE, gradflow.AUTOGRAD_GRAD, gradflow.MULTI_OUTPUT_VIEW,
)


def _access(d: OpDef, op: Op, args: tuple[ValueMeta | None, ...]) -> Access:
    idx = [i for i in written_operands(d, len(args)) if args[i] is not None]
    whole = tuple((i, (args[i],)) for i in idx)
    if d.writes is None or not idx:
        written, parts = whole, tuple(args[i] for i in idx)
    else:
        parts = tuple(d.writes(args, op.params))
        storages = [args[i].storage for i in idx]
        if len(idx) == 1:
            written = ((idx[0], parts),)
        elif len(set(storages)) == len(storages):  # each part on one written operand's storage
            written = tuple((i, tuple(p for p in parts if p.storage == args[i].storage)) for i in idx)
        else:  # written operands share a storage: whole operands (conservative)
            written = whole
    read = tuple((j, args[j]) for j in d.read_indices(len(args)) if args[j] is not None)
    return Access(op, d, written, parts, read)


def check_rules(d: OpDef, op: Op, args: tuple[ValueMeta | None, ...]) -> None:
    """Raise :class:`NoEagerMeaning` (with the rule's name) when statement ``op`` of row ``d``
    on layouts ``args`` breaks a rule of :data:`RULES`; return None otherwise."""
    access = _access(d, op, args)
    if not access.written:
        return
    for rule in RULES:
        if d.kind in rule.exempt:
            continue
        why = rule.check(access)
        if why is not None:
            raise NoEagerMeaning(rule.name, rule.summary, f"{op.op}: {why}")


def _step(
    index: int, op: Op, values: dict[str, ValueMeta | None], retired: dict[str, int] | None = None,
    inputs: set[str] | None = None,
) -> Step:
    d = lookup(op.op)
    d.check_arity(len(op.args))
    for a in op.args:
        if a not in values:
            raise InvalidArgument(f"statement {index} ({op.op}): {a!r} is not defined before use")
        if retired and a in retired:
            raise InvalidArgument(
                f"statement {index} ({op.op}): {a!r} is retired: statement {retired[a]} "
                "changed its tensor's sizes and strides in place"
            )
    for o in op.out:
        if o in values:
            raise InvalidArgument(f"statement {index} ({op.op}): {o!r} is bound twice")
    if len(set(op.out)) != len(op.out):
        raise InvalidArgument(f"statement {index} ({op.op}): repeated result name")
    args = tuple(values[a] for a in op.args)
    if BASE_ONLY in d.tags and not is_base(op.args[0], args[0], inputs or set()):
        raise InvalidArgument(
            f"statement {index} ({op.op}): {op.args[0]!r} may be a view (an input, an alias "
            "or an in-place result); eager refuses this op on a view"
        )
    if any(a is None for a in args) and "accepts_none" not in d.tags:
        raise InvalidArgument(f"statement {index} ({op.op}): an argument is None")
    try:
        outs = tuple(d.infer(args, op.params, op.out))
    except KeyError as e:
        raise InvalidArgument(f"statement {index} ({op.op}): missing parameter {e}") from None
    except NoEagerMeaning as e:  # a rule the row decides itself (racing-lanes, ...)
        raise e.at(f"statement {index} ({op.op})") from None
    except InvalidArgument as e:
        raise InvalidArgument(f"statement {index} ({op.op}): {e}") from None
    if d.n_out is not None and len(op.out) != d.n_out:
        raise InvalidArgument(
            f"statement {index} ({op.op}): binds {len(op.out)} names, the op returns {d.n_out}"
        )
    if len(outs) != len(op.out):
        raise InvalidArgument(
            f"statement {index} ({op.op}): binds {len(op.out)} names, the op returns {len(outs)}"
        )
    try:
        check_rules(d, op, args)
        _check_scatter_result(d, op, outs)
    except NoEagerMeaning as e:
        raise e.at(f"statement {index}") from None
    return Step(index, op, d, args, outs)


def _check_scatter_result(d: OpDef, op: Op, outs: tuple[ValueMeta | None, ...]) -> None:
    """A functional scatter (``select_scatter``, ``slice_scatter``, ...) copies its base and
    writes a part of the copy. Eager's copy can keep a self-overlapping base's strides
    (``select_scatter`` of strides ``(1, 3)`` returns strides ``(1, 3)``; the registry's
    ``infer`` gives eager's layout), and then the write lands on every index that shares
    an element: the result depends on the fresh tensor's layout, which no pipeline
    promises (the second audit's 26ee7c642f). Rejected as ``self-overlapping-write``."""
    if d.kind is not OpKind.SCATTER or not outs or outs[0] is None:
        return
    ans = self_overlap(outs[0])
    if ans.overlaps is None or ans.overlaps:
        rule = next(r for r in RULES if r.name == "self-overlapping-write")
        why = ("its fresh result maps two indices to one element" if ans.overlaps
               else _undecided("its fresh result overlaps itself", outs[0]))
        raise NoEagerMeaning(rule.name, rule.summary,
                             f"{op.op}: {why} (eager kept its base's layout) and is written")


# -- index tensors whose contents are known ----------------------------------------------
#: Storage inits whose integer contents follow from the spec alone (no torch run): what
#: :func:`aliasfuzz.fuzz.eager.storage_expr` builds for them.
_KNOWN_INITS = ("values", "arange", "zeros", "ones")
_INT_DTYPES = ("int64", "int32", "int16", "int8", "uint8")


def _storage_ints(s) -> list[int] | None:
    if s.dtype not in _INT_DTYPES or s.init not in _KNOWN_INITS:
        return None
    a = s.init_args
    if s.init == "values":
        data = a["data"]
        return [int(v) for v in data] if all(isinstance(v, int) for v in data) else None
    if s.init == "arange":
        start, step = a.get("start", 0), a.get("step", 1)
        if not (isinstance(start, int) and isinstance(step, int)):
            return None
        return [start + i * step for i in range(s.numel)]
    return [int(s.init == "ones")] * s.numel


def _known_inputs(program: Program, values: dict[str, ValueMeta | None]) -> dict[str, tuple[int, ...]]:
    """Integer inputs whose elements (row-major) follow from their storage spec, by name
    (the index tensors :func:`check_known_indices` checks). Values that wrap in the dtype
    (an ``arange`` past int8) count as unknown rather than guessed."""
    storages = {s.name: _storage_ints(s) for s in program.storages}
    bits = {"int64": 64, "int32": 32, "int16": 16, "int8": 8}
    out = {}
    for t in program.inputs:
        data, m = storages.get(t.storage), values.get(t.name)
        if data is None or m is None or m.numel > ENUM_LIMIT:
            continue
        lo, hi = (0, 255) if m.dtype == "uint8" else (-(1 << (bits[m.dtype] - 1)), (1 << (bits[m.dtype] - 1)) - 1)
        if all(lo <= v <= hi for v in data):
            out[t.name] = tuple(
                data[t.offset + sum(i * s for i, s in zip(at, t.stride, strict=True))]
                for at in itertools.product(*(range(n) for n in t.shape))
            )
    return out


def _forget_written(step: Step, known: dict[str, tuple[int, ...]], values) -> None:
    """Drop from ``known`` every input on a storage ``step`` writes (its contents change)."""
    written = {step.args[i].storage for i in written_operands(step.opdef, len(step.args))
               if i < len(step.args) and step.args[i] is not None}
    if METADATA_TAG in step.opdef.tags and step.args and step.args[0] is not None:
        written.add(step.args[0].storage)  # a new layout: the name's elements are others
    for n in [n for n in known if values[n].storage in written]:
        del known[n]


def _check_index_contents(step: Step, known: dict[str, tuple[int, ...]]) -> None:
    start = INDEX_START.get(step.op.op)
    if start is None:
        return
    contents = [known.get(a) for a in step.op.args[start:]]
    try:
        check_known_indices(step.op.op, step.args, step.op.params, contents)
    except NoEagerMeaning as e:
        raise e.at(f"statement {step.index} ({step.op.op})") from None
    except InvalidArgument as e:
        raise InvalidArgument(f"statement {step.index} ({step.op.op}): {e}") from None


def _check_leaf(step: Step, leaves: dict[str, int]) -> None:
    """Refuse ``step`` when it writes a storage a ``requires_grad_`` statement made a leaf's
    (``leaves``: storage -> that statement), or changes the metadata of a tensor on one:
    eager refuses an in-place write to a leaf requiring grad or to a view of it ("a leaf
    Variable that requires grad is being used in an in-place operation"), ``resize_`` of a
    tensor requiring grad and ``set_`` of such a leaf, and ``set_`` to its storage would give
    a tensor with no gradient formula. Conservative: a view taken before the leaf was made
    does not require grad, and eager would let it be written."""
    if not leaves:
        return
    d = step.opdef
    on = {step.args[i].storage for i in written_operands(d, len(step.args))
          if i < len(step.args) and step.args[i] is not None}
    if METADATA_TAG in d.tags:
        on |= {a.storage for a in step.args if a is not None}
    elif BASE_ONLY in d.tags and GRAD_LEAF not in d.tags and step.args[0] is not None:
        on.add(step.args[0].storage)  # detach_ of a leaf requiring grad
    hit = sorted(on & set(leaves))
    if hit:
        raise InvalidArgument(
            f"statement {step.index} ({step.op.op}): changes a tensor on {hit[0]!r}, a leaf "
            f"requiring grad since statement {leaves[hit[0]]}: eager refuses in-place changes "
            "of a leaf requiring grad and of its views"
        )


def infer(program: Program) -> Typed:
    """Type-check ``program`` and return every value's layout; raise InvalidArgument if bad."""
    if not isinstance(program, Program):
        raise InvalidArgument(f"expected a Program, got {type(program).__name__}")
    values = _input_values(program)
    steps = []
    per_storage = Counter(t.storage for t in program.inputs)
    layout = LayoutReads({t.name for t in program.inputs},  # the layout-readout rule
                         {t.storage for t in program.inputs},
                         {t.storage: values[t.name] for t in program.inputs
                          if per_storage[t.storage] == 1 and values.get(t.name) is not None})
    retired: dict[str, int] = {}  # name -> the statement that changed its metadata
    inputs = {t.name for t in program.inputs}
    known = _known_inputs(program, values)  # index tensors' contents, while unwritten
    leaves: dict[str, int] = {}  # storage -> the requires_grad_ that made it a leaf's
    for i, op in enumerate(program.body):
        step = _step(i, op, values, retired, inputs)
        _check_leaf(step, leaves)
        if GRAD_LEAF in step.opdef.tags:
            leaves.setdefault(step.args[0].storage, i)
        _check_index_contents(step, known)
        _forget_written(step, known, values)
        try:
            layout.check(step)
        except InvalidArgument as e:  # the message already starts with the rule's name
            raise NoEagerMeaning(LAYOUT_READOUT, f"statement {i}: {e}") from None
        layout.record(step)
        if METADATA_TAG in step.opdef.tags:
            retired.update(dict.fromkeys(retires(values, op.args[0]), i))
        values.update(zip(op.out, step.outs, strict=True))
        steps.append(step)
    for o in program.outputs:
        if o not in values:
            raise InvalidArgument(f"output {o!r} is not defined")
        if o in retired:
            raise InvalidArgument(
                f"output {o!r} is retired: statement {retired[o]} changed its tensor's sizes "
                "and strides in place"
            )
    gradflow.check(program, steps)  # leaf-inplace, autograd-grad, multi-output-view
    try:
        layout.check_outputs(program.outputs)
    except InvalidArgument as e:
        raise NoEagerMeaning(LAYOUT_READOUT, f"outputs: {e}") from None
    return Typed(values, tuple(steps), layout.stale | frozenset(retired), frozenset(retired))


def param(op: Op, key: str, default: Any = None) -> Any:
    """A statement parameter with a default (convenience for rules)."""
    return op.params.get(key, default)
