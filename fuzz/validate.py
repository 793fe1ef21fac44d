"""Semantic validation: abstract interpretation of a program over :class:`ValueMeta`.

:func:`infer` walks the body once, applying each registry row's shape/dtype/alias rule,
and rejects what PyTorch would reject or what has no single eager meaning:

* unknown ops, wrong arity, undefined or rebound names, out-of-bounds inputs;
* writes into a self-overlapping view (``expand`` results): PyTorch raises
  ("unsupported operation: more than one element of the written-to tensor refers to a
  single memory location");
* one op writing a layout that partially overlaps another argument it reads: the result
  would depend on iteration order (PyTorch raises for dense tensors and is undefined for
  the rest), so no compiled result could be judged against eager;
* ``layout-readout`` (:mod:`aliasfuzz.fuzz.layout_contract`): an op that reads layout as
  data (``observes_layout``) on a tensor whose layout no PyTorch contract promises.

Footprints are compared exactly by enumeration here (programs are small); the oracle's
Z3 model handles symbolic layouts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ir import Op, Program
from aliasfuzz.fuzz.layout_contract import LayoutReads
from aliasfuzz.fuzz.ops import lookup
from aliasfuzz.fuzz.ops.core import ENUM_LIMIT, OpDef, ValueMeta

__all__ = ["Step", "Typed", "infer"]



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
    """The result of :func:`infer`: every name's abstract value, and the typed steps."""

    values: dict[str, ValueMeta | None]
    steps: tuple[Step, ...]

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


def _small(*metas: ValueMeta) -> bool:
    return all(m.numel <= ENUM_LIMIT for m in metas)


def _check_writes(d: OpDef, op: Op, args: tuple[ValueMeta | None, ...]) -> None:
    written = d.written(args, op.params)
    for w in written:
        if _small(w) and w.has_internal_overlap():
            raise InvalidArgument(
                f"{op.op} writes a self-overlapping view (shape {w.shape}, stride {w.stride})"
            )
    for j in d.read_indices(len(args)):
        r = args[j]
        if r is None:
            continue
        for w in written:
            if r.storage != w.storage or not _small(r, w):
                continue
            same = (r.shape, r.stride, r.offset, r.dtype) == (w.shape, w.stride, w.offset, w.dtype)
            if not same and r.byte_footprint() & w.byte_footprint():
                raise InvalidArgument(
                    f"{op.op} reads argument {j} while writing a partially overlapping layout"
                )


def _step(index: int, op: Op, values: dict[str, ValueMeta | None]) -> Step:
    d = lookup(op.op)
    d.check_arity(len(op.args))
    for a in op.args:
        if a not in values:
            raise InvalidArgument(f"statement {index} ({op.op}): {a!r} is not defined before use")
    for o in op.out:
        if o in values:
            raise InvalidArgument(f"statement {index} ({op.op}): {o!r} is bound twice")
    if len(set(op.out)) != len(op.out):
        raise InvalidArgument(f"statement {index} ({op.op}): repeated result name")
    args = tuple(values[a] for a in op.args)
    if any(a is None for a in args) and "accepts_none" not in d.tags:
        raise InvalidArgument(f"statement {index} ({op.op}): an argument is None")
    try:
        outs = tuple(d.infer(args, op.params, op.out))
    except KeyError as e:
        raise InvalidArgument(f"statement {index} ({op.op}): missing parameter {e}") from None
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
    if d.mutated_indices(len(args)) or d.writes is not None:
        try:
            _check_writes(d, op, args)
        except InvalidArgument as e:
            raise InvalidArgument(f"statement {index}: {e}") from None
    return Step(index, op, d, args, outs)


def infer(program: Program) -> Typed:
    """Type-check ``program`` and return every value's layout; raise InvalidArgument if bad."""
    if not isinstance(program, Program):
        raise InvalidArgument(f"expected a Program, got {type(program).__name__}")
    values = _input_values(program)
    steps = []
    layout = LayoutReads({t.name for t in program.inputs})  # the layout-readout rule
    for i, op in enumerate(program.body):
        step = _step(i, op, values)
        try:
            layout.check(step)
        except InvalidArgument as e:
            raise InvalidArgument(f"statement {i}: {e}") from None
        layout.record(step)
        values.update(zip(op.out, step.outs, strict=True))
        steps.append(step)
    for o in program.outputs:
        if o not in values:
            raise InvalidArgument(f"output {o!r} is not defined")
    return Typed(values, tuple(steps))


def param(op: Op, key: str, default: Any = None) -> Any:
    """A statement parameter with a default (convenience for rules)."""
    return op.params.get(key, default)
