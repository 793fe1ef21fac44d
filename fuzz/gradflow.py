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
  (:mod:`aliasfuzz.fuzz.ops.autograd`) are exempt: eager takes them. Eager gives the same
  message for a write to an input that does *not* require grad once a value requiring grad
  was written into its storage through another name: the storage's base is a leaf, the
  other views' ``grad_fn`` is stale, and an in-place write through one of them (or through
  a view made from one, as ``x[i] = v`` does) is refused (``x[:].add_(w); x.add_(1)``;
  ``x.add_(w); x.add_(1)`` runs). Refused here: after such a write at statement ``i``
  through name ``W``, every later write to that storage outside ``no_grad`` but one
  through ``W`` alone by a row other than ``setitem*`` (conservative); and ``x[i] += v``
  (``setitem_iadd``) with ``v`` requiring grad, which writes twice that way itself.
* ``autograd-grad``: a ``torch.autograd.grad(y.sum(), [x])`` statement eager refuses, or
  whose answer this walk cannot vouch for: ``y`` requires no grad ("element 0 of tensors
  does not require grad"); ``x`` is neither a leaf input requiring grad nor an intermediate
  whose storage nothing wrote since it was computed (a write rebases its ``grad_fn``); ``x``
  is not in ``y``'s graph ("appears to not have been used in the graph"); a statement of
  ``y``'s history saved a tensor for backward that a later statement overwrote, in place or
  under ``no_grad``, or that its own write overwrote through another operand (``x.mul_(x)``)
  ("modified by an inplace operation": every row outside :data:`SAVES_NOTHING` counts as
  saving every tensor it touches); a ``scatter_``/``scatter_add`` of ``y``'s history has a
  ``src`` larger than its index ("returned an invalid gradient"); an earlier
  ``retain_graph=False`` call freed buffers ("backward through the graph a second time");
  ``y``'s history holds an op this walk does not model (``out=``, custom ops, Triton
  launches, control flow, metadata mutation) or an op of
  :data:`aliasfuzz.fuzz.grads.GRAD_EXCLUDED` (its gradient, which the statement returns
  as a value, is not one definite value).
* ``multi-output-view``: an output of a view returning several views (``split``,
  ``chunk``, ``unbind``), or a view of one, that requires grad, written in place outside
  ``no_grad`` ("This view is the output of a function that returns multiple views. Such
  functions do not allow the output views to be modified inplace"), or used (read by a
  statement, or returned: the shared loss reads it) after a write to its storage since it
  was made, in place or under ``no_grad`` ("its base or another view of its base has been
  modified inplace"): ``handle_view_on_rebase`` in ``torch/csrc/autograd/variable.cpp``.
  Storage-level (inputs on one storage share its version counter through ``detach``), so
  conservative.

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

__all__ = ["AUTOGRAD_GRAD", "LEAF_INPLACE", "MULTI_OUTPUT_VIEW", "SAVES_NOTHING", "check",
           "loss_refusal", "requires_grad"]

LEAF_INPLACE = "leaf-inplace"
AUTOGRAD_GRAD = "autograd-grad"
MULTI_OUTPUT_VIEW = "multi-output-view"
_SUMMARIES = {
    MULTI_OUTPUT_VIEW: "a multi-output view requiring grad written in place, or used after a "
    "write to its storage",
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
    storage: dict[str, str] = field(default_factory=dict)  # name -> its storage
    ops: dict[int, str] = field(default_factory=dict)  # statement -> its op name
    clobber: dict[int, frozenset[str]] = field(default_factory=dict)  # saving statement -> storages it overwrote itself
    refused: dict[int, str] = field(default_factory=dict)  # statement -> why its backward raises
    grad_written: dict[str, tuple[int, frozenset[str]]] = field(default_factory=dict)  # input storage -> (first statement writing grad into it, names written through)
    multi: dict[str, tuple[str, int]] = field(default_factory=dict)  # multi-output view -> (storage, statement)

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


def loss_refusal(program: Any, steps: Sequence[Any]) -> str | None:
    """Why the backward of the shared loss (:func:`aliasfuzz.fuzz.grads.backward`, over the
    returned values requiring grad) would raise for ``program`` (a validated program and its
    statements ``steps``) in eager, or, after a ``retain_graph=False`` call, in a compiled
    pipeline; by the model above; None when this walk sees no reason.

    Not a validation rule: the program's forward has one meaning, and the oracle skips the
    gradient comparison where eager's backward raises (``oracle/differential.py``). The
    generator (:mod:`aliasfuzz.fuzz._genautograd`) uses it to keep the gradients observable.
    Reasons: the backward passes a statement that saved a tensor a later statement (or its
    own write, ``x.mul_(x)``) overwrote (in place or under ``no_grad``: "modified by an
    inplace operation"), a ``scatter_``/``scatter_add`` whose ``src`` is larger than its
    index (the engine refuses the gradient's shape), or a statement before an earlier
    ``retain_graph=False`` call ("backward through the graph a second time": eager raises
    only for a saving statement the call ran, but a compiled pipeline frees the whole
    backward node of the graph before the call's graph break, so every such return is
    refused: otherwise every pipeline would crash where eager runs)."""
    flow = _walk(program, steps, check_rules=False)
    for o in program.outputs:
        s = flow.storage.get(o)
        if s is None or not (flow.src.get(o, frozenset()) | flow.st_src.get(s, frozenset())):
            continue
        hist = flow.hist.get(o, frozenset()) | flow.st_hist.get(s, frozenset())
        for i in sorted(hist):
            hit = _overwritten(flow, i)
            if hit is not None:
                return (f"{o}'s backward reads what statement {i} ({flow.ops[i]}) saved of "
                        f"{hit[0]}, which statement {hit[1]} overwrote")
            if i in flow.refused:
                return f"statement {i} ({flow.ops[i]}): {flow.refused[i]}"
            if flow.freed is not None and i < flow.freed:
                # eager frees only what the call ran that saved tensors; a compiled pipeline
                # runs the statements before the call's graph break as one backward node,
                # which the call frees whole (aot_eager: 'backward through the graph a
                # second time' where eager runs): refuse every return computed before it
                return (f"{o}'s backward passes statement {i} ({flow.ops[i]}), computed before "
                        f"statement {flow.freed}'s retain_graph=False call")
    return None


def check(program: Any, steps: Sequence[Any]) -> None:
    """Raise :class:`NoEagerMeaning` (rule ``leaf-inplace``, ``autograd-grad`` or ``multi-output-view``) on the first
    statement of ``steps`` eager's autograd refuses; None when there is none."""
    if not any(t.requires_grad for t in program.inputs) and not any(s.op.op == GRAD for s in steps):
        return
    _walk(program, steps, check_rules=True)


def _walk(program: Any, steps: Sequence[Any], check_rules: bool) -> _Flow:
    flow = _Flow()
    leaf_storages = {t.storage for t in program.inputs if t.requires_grad}
    input_storages = {t.storage for t in program.inputs} - leaf_storages
    for t in program.inputs:
        flow.src[t.name] = frozenset({t.name}) if t.requires_grad else frozenset()
        flow.storage[t.name] = t.storage
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
        wnames = {s: frozenset(op.args[i] for i in written_operands(d, len(step.args))
                               if i < len(step.args) and step.args[i] is not None
                               and step.args[i].storage == s) for s in written}
        if check_rules and not no_grad:
            _check_stale(flow, step, wnames)
        if check_rules:
            _check_multi(flow, step, [op.args[i] for i in written_operands(d, len(op.args))
                                      if i < len(op.args)], no_grad)
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
                # x.mul_(x): what the statement saved of an operand it does not write is
                # overwritten by its own write (the written operand's original is kept)
                wi = set(written_operands(d, len(step.args)))
                flow.clobber[step.index] = frozenset(written) & frozenset(
                    m.storage for k, m in enumerate(step.args) if m is not None and k not in wi)
            why = _shape_refusal(op, step)
            if why is not None:
                flow.refused[step.index] = why
        for o, m in zip(op.out, step.outs, strict=True):
            if m is None:
                continue
            flow.storage[o] = m.storage
            carries = m.dtype in _FLOATS and d.kind is not OpKind.FACTORY
            flow.src[o] = src if carries else frozenset()
            flow.hist[o] = hist if carries else frozenset()
            if carries and src and d.kind is OpKind.FUNCTIONAL and m.storage == o:
                flow.fresh[o] = step.index
                flow.src[o] = src | {o}
        if check_rules and src and op.op.startswith("setitem_iadd") and set(written) & input_storages:
            # view = x[i]; view += v; x[i] = view: its second write goes through a view made
            # from x after its first wrote grad into x's storage through another one
            raise _reject(LEAF_INPLACE, f"statement {step.index} ({op.op}) adds a value requiring "
                          f"grad into {', '.join(sorted(set(written) & input_storages))} through "
                          "x[i] += v, whose write-back x[i] = view goes through a stale view")
        for s in written:
            if src:
                flow.st_src[s] = flow.st_src.get(s, frozenset()) | src
                flow.st_hist[s] = flow.st_hist.get(s, frozenset()) | hist
                if s in input_storages:
                    via = wnames[s] | ({"[]"} if op.op.startswith("setitem") else set())
                    first, names = flow.grad_written.get(s, (step.index, frozenset()))
                    flow.grad_written[s] = (first, names | via)
        if d.kind is OpKind.VIEW and ((d.n_out != 1 and src) or any(a in flow.multi for a, _ in pairs)):
            for o, m in zip(op.out, step.outs, strict=True):
                if m is not None:  # a view of such a view inherits its creation meta
                    flow.multi[o] = (m.storage, step.index)
    if check_rules:
        _check_multi_uses(flow, [o for o in program.outputs if o in flow.multi], "the program's return")
    return flow


#: Rows whose backward returns ``src``'s gradient in ``index``'s shape
#: (``grad.gather(dim, index)``, ``tools/autograd/derivatives.yaml``), which the engine
#: refuses where ``src`` is larger ("returned an invalid gradient at index 1").
_INDEX_SHAPED_SRC = frozenset({"scatter_", "scatter_add_", "scatter_add"})


def _shape_refusal(op: Any, step: Any) -> str | None:
    if op.op not in _INDEX_SHAPED_SRC or len(step.args) < 2 or step.args[1] is None:
        return None
    idx, shape = op.params.get("index"), []
    while isinstance(idx, list | tuple):
        shape.append(len(idx))
        idx = idx[0] if idx else None
    if tuple(shape) == tuple(step.args[1].shape):
        return None
    return (f"src's shape {tuple(step.args[1].shape)} is not index's {tuple(shape)}: its "
            "backward's gradient for src has index's shape, which the engine refuses")


def _overwritten(flow: _Flow, i: int) -> tuple[str, int] | None:
    """A storage statement ``i`` may have saved for backward and the first statement that
    overwrote it since (``i`` itself for :attr:`_Flow.clobber`); None when there is none."""
    for s in sorted(flow.touched.get(i, ())):
        later = [j for j in flow.writes.get(s, ())
                 if j > i or (j == i and s in flow.clobber.get(i, ()))]
        if later:
            return s, later[0]
    return None


def _check_stale(flow: _Flow, step: Any, wnames: dict[str, frozenset[str]]) -> None:
    for s, names in sorted(wnames.items()):
        if s not in flow.grad_written:
            continue
        first, via = flow.grad_written[s]
        if len(via) == 1 and names == via and not step.op.op.startswith("setitem"):
            continue  # x.add_(w); x.add_(1): x's own grad_fn was rebased
        raise _reject(LEAF_INPLACE, f"statement {step.index} ({step.op.op}) writes {s} through "
                      f"{', '.join(sorted(names))} after statement {first} wrote a value requiring "
                      f"grad into it through {', '.join(sorted(via))} (the storage's base is a leaf; "
                      "other views' grad_fn is stale)")


def _check_multi_uses(flow: _Flow, names, where: str) -> None:
    for n in names:
        s, made = flow.multi[n]
        later = [j for j in flow.writes.get(s, ()) if j >= made]
        if later:
            raise _reject(MULTI_OUTPUT_VIEW, f"{where} uses {n}, a multi-output view requiring "
                          f"grad, after statement {later[0]} wrote its storage {s} (eager: 'its "
                          "base or another view of its base has been modified inplace')")


def _check_multi(flow: _Flow, step: Any, written_names, no_grad: bool) -> None:
    if not no_grad:
        for n in written_names:
            if n in flow.multi:
                raise _reject(MULTI_OUTPUT_VIEW, f"statement {step.index} ({step.op.op}) writes "
                              f"{n} in place, a multi-output view requiring grad (eager: 'Such "
                              "functions do not allow the output views to be modified inplace')")
    _check_multi_uses(flow, sorted({a for a in step.op.args if a in flow.multi}),
                      f"statement {step.index} ({step.op.op})")


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
        if i in flow.refused:
            raise _reject(AUTOGRAD_GRAD, f"{where}: statement {i} ({name}) of {y}'s history: "
                          f"{flow.refused[i]}")
        hit = _overwritten(flow, i)
        if hit is not None:
            raise _reject(AUTOGRAD_GRAD, f"{where}: statement {hit[1]} overwrote {hit[0]}, "
                          f"which statement {i} of {y}'s history may have saved for backward "
                          "(eager: 'modified by an inplace operation')")
