"""Which values require grad, and what eager's autograd refuses: validation's autograd rules.

A static walk over the typed statements of a program with ``requires_grad`` inputs
(:func:`check`, called by :func:`aliasfuzz.fuzz.validate.infer`). It mirrors eager's
autograd as far as generated programs need, and rejects with :class:`NoEagerMeaning` what
eager raises on (or leaves without one definite value):

* ``leaf-inplace``: an in-place write, outside ``torch.no_grad()``, to a storage holding an
  input that requires grad (eager: "a leaf Variable that requires grad is being used in an
  in-place operation", or "a view of a leaf Variable ...": ``check_inplace`` in
  ``torch/csrc/autograd/VariableTypeUtils.h``). Storage-level, so an alias of the leaf
  written through another input is refused too (conservative). The ``no_grad.<row>`` rows
  (:mod:`aliasfuzz.fuzz.ops.autograd`) are exempt: eager takes them.
* ``autograd-grad``: a ``torch.autograd.grad(y.sum(), [x])`` statement eager refuses, or
  whose answer this walk cannot vouch for: ``y`` requires no grad ("element 0 of tensors
  does not require grad"); ``x`` is neither a leaf input requiring grad nor an intermediate
  whose storage nothing wrote since it was computed (a write rebases its ``grad_fn``); ``x``
  is not in ``y``'s graph ("appears to not have been used in the graph"); a statement of
  ``y``'s history saved a tensor for backward that a later statement overwrote, in place or
  under ``no_grad`` ("modified by an inplace operation": every row outside
  :data:`SAVES_NOTHING` counts as saving every tensor it touches); an earlier
  ``retain_graph=False`` call freed buffers ("backward through the graph a second time");
  ``y``'s history holds an op this walk does not model (``out=``, custom ops, Triton
  launches, control flow, metadata mutation) or an op of
  :data:`aliasfuzz.fuzz.grads.GRAD_EXCLUDED` (its gradient, which the statement returns
  as a value, is not one definite value).

The model: a value's *sources* (the leaf inputs and intermediates whose gradient reaches
it) are those of what it was computed from, plus everything written into its storage while
grad mode was on (eager rebases every view of a storage onto an in-place write's history:
``CopySlices``); integer and bool results, factories and ``autograd_grad`` results carry
none; ``no_grad`` writes add none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from aliasfuzz.fuzz.ops.autograd import GRAD, NO_GRAD
from aliasfuzz.fuzz.ops.core import NoEagerMeaning, OpKind
from aliasfuzz.fuzz.ops.metadata import TAG as METADATA_TAG
from aliasfuzz.fuzz.ops.schema import written_operands

__all__ = ["AUTOGRAD_GRAD", "LEAF_INPLACE", "SAVES_NOTHING", "check", "requires_grad"]

LEAF_INPLACE = "leaf-inplace"
AUTOGRAD_GRAD = "autograd-grad"
_SUMMARIES = {
    LEAF_INPLACE: "an in-place write to a leaf requiring grad (or a view of one) outside no_grad",
    AUTOGRAD_GRAD: "a torch.autograd.grad call eager refuses or gives no definite value",
}
_FLOATS = ("float32", "float64", "float16", "bfloat16")
_MODELED = (OpKind.VIEW, OpKind.FUNCTIONAL, OpKind.FACTORY, OpKind.INPLACE, OpKind.SCATTER)

#: Rows whose backward reads no tensor value (only sizes, scalars or nothing), so a later
#: write to what they touched cannot trip autograd's version check. Every other row is
#: taken to save every tensor it touches (conservative). View rows save geometry only.
SAVES_NOTHING: frozenset[str] = frozenset({
    "add", "add.Scalar", "sub", "sub.Scalar", "neg", "clone", "contiguous", "sum", "mean",
    "cat", "flip", "mul.Scalar", "add_", "add_.Scalar", "sub_", "sub_.Scalar", "mul_.Scalar",
    "copy_", "zero_", "fill_", "neg_", "setitem", "setitem.Scalar", "setitem_iadd",
    "setitem_iadd.Scalar", "slice_scatter", "select_scatter", "diagonal_scatter", GRAD,
})


def _reject(rule: str, detail: str) -> NoEagerMeaning:
    return NoEagerMeaning(rule, _SUMMARIES[rule], detail)


@dataclass
class _Flow:
    """The walk's state: sources and history (statement indices) per name and per storage."""

    src: dict[str, frozenset[str]] = field(default_factory=dict)
    hist: dict[str, frozenset[int]] = field(default_factory=dict)
    st_src: dict[str, frozenset[str]] = field(default_factory=dict)
    st_hist: dict[str, frozenset[int]] = field(default_factory=dict)
    writes: dict[str, list[int]] = field(default_factory=dict)  # storage -> writing statements
    touched: dict[int, frozenset[str]] = field(default_factory=dict)  # saving statement -> storages
    unmodeled: set[int] = field(default_factory=set)
    fresh: dict[str, int] = field(default_factory=dict)  # intermediate source -> its statement
    freed: int | None = None  # an earlier retain_graph=False call
    ops: dict[int, str] = field(default_factory=dict)  # statement -> its op name

    def sources(self, name: str, meta: Any) -> frozenset[str]:
        return self.src.get(name, frozenset()) | self.st_src.get(meta.storage, frozenset())

    def history(self, name: str, meta: Any) -> frozenset[int]:
        return self.hist.get(name, frozenset()) | self.st_hist.get(meta.storage, frozenset())


def requires_grad(program: Any, steps: Sequence[Any]) -> dict[str, bool]:
    """Whether each name of ``program`` requires grad after its statements ``steps`` (those
    of :func:`aliasfuzz.fuzz.validate.infer`), by the model above (no rule is checked)."""
    flow = _walk(program, steps, check_rules=False)
    metas = {t.name: t for t in program.inputs}
    out = {n: bool(s) for n, s in flow.src.items()}
    for n in metas:
        out[n] = out.get(n, False)
    return out


def check(program: Any, steps: Sequence[Any]) -> None:
    """Raise :class:`NoEagerMeaning` (rule ``leaf-inplace`` or ``autograd-grad``) on the first
    statement of ``steps`` eager's autograd refuses; None when there is none."""
    if not any(t.requires_grad for t in program.inputs) and not any(s.op.op == GRAD for s in steps):
        return
    _walk(program, steps, check_rules=True)


def _walk(program: Any, steps: Sequence[Any], check_rules: bool) -> _Flow:
    flow = _Flow()
    leaf_storages = {t.storage for t in program.inputs if t.requires_grad}
    for t in program.inputs:
        flow.src[t.name] = frozenset({t.name}) if t.requires_grad else frozenset()
    for step in steps:
        d, op = step.opdef, step.op
        flow.ops[step.index] = op.op
        written = sorted({step.args[i].storage for i in written_operands(d, len(step.args))
                          if i < len(step.args) and step.args[i] is not None})
        no_grad = NO_GRAD in d.tags
        if check_rules and not no_grad and set(written) & leaf_storages:
            raise _reject(LEAF_INPLACE, f"statement {step.index} ({op.op}) writes "
                          f"{', '.join(sorted(set(written) & leaf_storages))}, the storage of an "
                          "input requiring grad")
        pairs = [(a, m) for a, m in zip(op.args, step.args, strict=True) if m is not None]
        if op.op == GRAD and check_rules:
            _check_grad(flow, step, pairs)
        for s in written:
            flow.writes.setdefault(s, []).append(step.index)
        if op.op == GRAD:
            if not op.params.get("retain_graph", False) and flow.freed is None:
                flow.freed = step.index
            for o in op.out:
                flow.src[o], flow.hist[o] = frozenset(), frozenset()
            continue
        if no_grad:
            continue
        src = frozenset().union(*(flow.sources(a, m) for a, m in pairs))
        hist = frozenset().union(*(flow.history(a, m) for a, m in pairs))
        if src:
            hist |= {step.index}
            if d.kind not in _MODELED or METADATA_TAG in d.tags:
                flow.unmodeled.add(step.index)
            if d.name not in SAVES_NOTHING and d.kind is not OpKind.VIEW:
                flow.touched[step.index] = frozenset(
                    {m.storage for _, m in pairs} | {m.storage for m in step.outs if m is not None})
        for o, m in zip(op.out, step.outs, strict=True):
            if m is None:
                continue
            carries = m.dtype in _FLOATS and d.kind is not OpKind.FACTORY
            flow.src[o] = src if carries else frozenset()
            flow.hist[o] = hist if carries else frozenset()
            if carries and src and d.kind is OpKind.FUNCTIONAL and m.storage == o:
                flow.fresh[o] = step.index
                flow.src[o] = src | {o}
        for s in written:
            if src:
                flow.st_src[s] = flow.st_src.get(s, frozenset()) | src
                flow.st_hist[s] = flow.st_hist.get(s, frozenset()) | hist
    return flow


def _check_grad(flow: _Flow, step: Any, pairs) -> None:
    from aliasfuzz.fuzz.grads import GRAD_EXCLUDED

    where = f"statement {step.index} ({GRAD})"
    if len(pairs) != 2:
        raise _reject(AUTOGRAD_GRAD, f"{where}: an argument is None")
    (y, ym), (x, xm) = pairs
    src, hist = flow.sources(y, ym), flow.history(y, ym)
    if not src:
        raise _reject(AUTOGRAD_GRAD, f"{where}: {y} does not require grad (eager: 'element 0 "
                      "of tensors does not require grad and does not have a grad_fn')")
    leaf = flow.src.get(x) == frozenset({x})
    if not leaf and x not in flow.fresh:
        raise _reject(AUTOGRAD_GRAD, f"{where}: {x} is neither a leaf input requiring grad nor "
                      "a fresh intermediate that requires grad")
    if x in flow.fresh and any(j > flow.fresh[x] for j in flow.writes.get(xm.storage, ())):
        raise _reject(AUTOGRAD_GRAD, f"{where}: {x}'s storage was written after {x} was "
                      "computed (its grad_fn was rebased)")
    if x not in src:
        raise _reject(AUTOGRAD_GRAD, f"{where}: {x} is not in {y}'s graph (eager: 'appears to "
                      "not have been used in the graph')")
    if flow.freed is not None:
        raise _reject(AUTOGRAD_GRAD, f"{where}: statement {flow.freed} freed the graph's "
                      "buffers (retain_graph=False)")
    for i in sorted(hist):
        if i in flow.unmodeled:
            raise _reject(AUTOGRAD_GRAD, f"{where}: statement {i} of {y}'s history is not "
                          "modeled (out=, custom, Triton, control flow or metadata mutation)")
        name = flow.ops.get(i, "")
        if name in GRAD_EXCLUDED:
            raise _reject(AUTOGRAD_GRAD, f"{where}: statement {i} ({name}) of {y}'s history: "
                          f"{GRAD_EXCLUDED[name]}")
        for s in flow.touched.get(i, ()):
            later = [j for j in flow.writes.get(s, ()) if j > i]
            if later:
                raise _reject(AUTOGRAD_GRAD, f"{where}: statement {later[0]} overwrote {s}, "
                              f"which statement {i} of {y}'s history may have saved for backward "
                              "(eager: 'modified by an inplace operation')")
