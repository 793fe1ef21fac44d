"""Gradients as an observable: one loss, one backward, the same in every run.

Every run that compares gradients (eager, its fp64 shadow, each ``torch.compile`` pipeline,
TorchScript's per-call comparison) builds the loss with :func:`loss` and differentiates it
with :func:`backward`, so that two runs differ in their gradients only where their backward
graphs differ. The loss is ``sum(o.sum())`` over the outputs that are floating and require
grad; integer, bool and complex outputs, and outputs cut from autograd, carry no gradient.

:func:`grad_exclusion` names the ops whose eager gradient is not one definite value for the
oracle to compare against (non-differentiable points, tie-breaking reductions, backwards
eager refuses), so a program holding one gets no gradient comparison (and the generator
never marks its inputs ``requires_grad``: :func:`mark_grad_leaves`).

Mirrors ``torch.autograd.grad(..., allow_unused=True)`` (``torch/autograd/__init__.py``):
an unused leaf's gradient is ``None`` there and zeros here, as in TorchScript's comparison
before this module.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import torch

__all__ = ["GRAD_EXCLUDED", "backward", "grad_exclusion", "has_grad_inputs", "leaves", "loss",
           "mark_grad_leaves"]

#: op name -> why a program holding it gets no gradient comparison (and no ``requires_grad``
#: inputs from the generator). Row kinds excluded as a whole are in :data:`_EXCLUDED_KINDS`.
GRAD_EXCLUDED: dict[str, str] = {
    "clamp_": "non-differentiable at its bounds: eager's subgradient and a decomposition's may differ",
    "cumprod": "eager's cumprod_backward special-cases zeros; a decomposition may not",
    "cumprod_": "eager's cumprod_backward special-cases zeros; a decomposition may not",
    "index_reduce": "amax/amin/prod reductions break ties by an order no pipeline promises",
    "index_reduce_": "amax/amin/prod reductions break ties by an order no pipeline promises",
    "scatter_reduce": "amax/amin/prod reductions break ties by an order no pipeline promises",
    "scatter_reduce_": "amax/amin/prod reductions break ties by an order no pipeline promises",
    "index_put_": "accumulation into duplicate indices sums in an order eager does not fix",
    "index_put_.Tensor": "accumulation into duplicate indices sums in an order eager does not fix",
    "put": "accumulation into duplicate indices sums in an order eager does not fix",
    "put_": "accumulation into duplicate indices sums in an order eager does not fix",
    "igamma": "eager has no derivative with respect to its first argument",
    "igamma_": "eager has no derivative with respect to its first argument",
    "gcd": "integer-only: not differentiable",
    "gcd_": "integer-only: not differentiable",
    "lcm": "integer-only: not differentiable",
    "lcm_": "integer-only: not differentiable",
    "view_dtype": "autograd refuses a view across dtypes of another item size",
    "if_lt_add_": "a data-dependent branch: its two sides' gradients differ by design",
}

_FLOATING = ("float32", "float64", "float16", "bfloat16")

#: row kind -> why (``OpKind`` values): eager refuses or cannot differentiate them.
_EXCLUDED_KINDS: dict[str, str] = {
    "out": "out= ops refuse inputs that require grad (\"functions with out=... arguments "
    "don't support automatic differentiation\")",
    "custom": "custom ops of the registry register no autograd formula",
    "triton": "user Triton kernel launches have no autograd formula",
}


def grad_exclusion(program: Any, marked: frozenset[str] | set[str] | None = None) -> str | None:
    """Why ``program`` (a :class:`~aliasfuzz.fuzz.ir.Program`) gets no gradient comparison,
    as ``"<op>: <why>"``; None when every op a gradient flows through has a definite eager
    gradient.

    ``marked`` names the inputs requiring grad (default: those the program marks). A
    gradient flows through a statement when an argument lives on a storage some marked input
    or a value computed from one reaches (storage-level, so every view of a written storage
    counts: eager rebases views onto an in-place write's autograd history). Such a statement
    of :data:`GRAD_EXCLUDED`, of an excluded kind (``out=``, custom ops, Triton launches) or
    changing metadata in place (``t_``, ``detach_``: refused on a leaf, or a change of
    ``requires_grad`` itself), or with an integer or bool result (autograd refuses one that
    would require grad) excludes the program; a program validation does not type is
    excluded too. A ``requires_grad_`` statement (a leaf made inside the program: tag
    ``grad_leaf``) is a source as a marked input is, from that statement on, so a program
    holding one is judged the same way even without marked inputs (eager refuses an ``out=``
    op of a value requiring grad in the forward already). Gradients stay those of the
    marked inputs: the backward of the shared loss stops at the made leaf, so a made leaf
    changes which outputs require grad (the ``requires_grad`` check), never the definite
    gradients compared."""
    from aliasfuzz.fuzz.ops import REGISTRY
    from aliasfuzz.fuzz.ops.metadata import GRAD_LEAF
    from aliasfuzz.fuzz.ops.metadata import TAG as METADATA_TAG
    from aliasfuzz.fuzz.ops.schema import written_operands
    from aliasfuzz.fuzz.validate import infer

    if marked is None:
        marked = {t.name for t in program.inputs if t.requires_grad}
    made = any(op.op in REGISTRY and GRAD_LEAF in REGISTRY[op.op].tags for op in program.body)
    if not marked and not made:
        return None
    try:
        typed = infer(program)
    except Exception as e:  # no typed program, no analysis: compare nothing rather than guess
        return f"untyped program ({type(e).__name__})"
    tainted = {t.storage for t in program.inputs if t.name in marked}
    for step in typed.steps:
        d = step.opdef
        if GRAD_LEAF in d.tags:  # requires_grad_: a leaf made inside the program
            tainted.add(step.args[0].storage)
            continue
        if not any(a is not None and a.storage in tainted for a in step.args):
            continue
        if step.op.op in GRAD_EXCLUDED:
            return f"{step.op.op}: {GRAD_EXCLUDED[step.op.op]}"
        if d.kind.value in _EXCLUDED_KINDS:
            return f"{step.op.op}: {_EXCLUDED_KINDS[d.kind.value]}"
        if METADATA_TAG in d.tags:
            return f"{step.op.op}: changes a tensor's metadata in place (refused on a leaf requiring grad)"
        if any(o is not None and o.dtype not in _FLOATING for o in step.outs):
            # e.g. select_scatter of an int64 tensor with a source requiring grad: autograd
            # refuses ("Autograd not support dtype: Long") where the program alone runs
            return f"{step.op.op}: an integer or bool result of a value requiring grad"
        tainted |= {o.storage for o in step.outs if o is not None}
        for i in written_operands(d, len(step.args)):
            if i < len(step.args) and step.args[i] is not None:
                tainted.add(step.args[i].storage)
    return None


def has_grad_inputs(program: Any) -> bool:
    """Whether an input of the IR ``program`` requires grad: the ``torch.compile`` pipelines
    then run its backward before its inputs and values are compared (blame's cut and the
    repro run it too). False for a subject that is not an IR program (a case file)."""
    return any(getattr(t, "requires_grad", False) for t in getattr(program, "inputs", ()) or ())


def leaves(inputs: Sequence[Any]) -> list[int]:
    """Positions of the inputs that are leaf tensors requiring grad (what gradients are of)."""
    return [
        i for i, t in enumerate(inputs)
        if isinstance(t, torch.Tensor) and t.requires_grad and t.is_leaf
    ]


def loss(outputs: Sequence[Any]) -> torch.Tensor | None:
    """``sum(o.sum())`` over the floating outputs that require grad; None when there is none.

    One loss for every run: the differences it can show are the backward graph's (its
    tangents are ones, expanded to each output's shape by ``sum``'s backward)."""
    outs = [
        o for o in outputs
        if isinstance(o, torch.Tensor) and o.is_floating_point() and o.requires_grad
    ]
    if not outs:
        return None
    return sum(o.sum() for o in outs)


def backward(outputs: Sequence[Any], inputs: Sequence[Any]) -> tuple[Any, ...] | None:
    """The gradients of :func:`loss` of ``outputs`` with respect to the leaf inputs.

    Returns a tuple aligned with ``inputs``: the gradient of each leaf requiring grad (zeros
    when the loss does not depend on it, ``allow_unused``), None for every other input; or
    None when there are no leaves or no output carries a gradient. Exceptions of the
    backward (the system under test's) propagate to the caller, who records them as data.
    """
    at = leaves(inputs)
    if not at:
        return None
    total = loss(outputs)
    if total is None:
        return None
    gs = torch.autograd.grad(total, [inputs[i] for i in at], allow_unused=True)
    out: list[Any] = [None] * len(inputs)
    for i, g in zip(at, gs, strict=True):
        out[i] = torch.zeros_like(inputs[i]) if g is None else g
    return tuple(out)


def _written_storages(program: Any) -> set[str] | None:
    """Names of the input storages some statement of ``program`` writes (through any view);
    None when validation does not type the program."""
    from aliasfuzz.fuzz.ops.schema import written_operands
    from aliasfuzz.fuzz.validate import infer

    try:
        typed = infer(program)
    except Exception:  # an untyped program gets no leaves: the generator only marks typed ones
        return None
    written: set[str] = set()
    for step in typed.steps:
        for i in written_operands(step.opdef, len(step.args)):
            meta = step.args[i] if i < len(step.args) else None
            if meta is not None:
                written.add(meta.storage)
    return written


def mark_grad_leaves(program: Any, share: float, seed: int, index: int) -> Any:
    """``program`` with ``requires_grad`` on its floating inputs whose storage it never
    writes, for a ``share`` of ``(seed, index)`` pairs; else ``program`` itself, unchanged.

    The choice uses its own ``random.Random`` seeded from ``(seed, index)``, drawn after the
    program is built, so the ops and inputs drawn for a seed are the same whatever ``share``
    is (share 0 gives the programs byte for byte as before). A program that
    :func:`grad_exclusion` excludes with those leaves, or whose floating inputs all live on written storages
    (eager refuses an in-place write to a leaf requiring grad, or to a view of one), or
    that validation rejects once marked (:mod:`aliasfuzz.fuzz.gradflow`: e.g. a value
    requiring grad written into an unmarked input through a view, then a write through the
    input itself), is returned unchanged; a storage counts as written, and validation
    checks, the program's :func:`~aliasfuzz.fuzz.optional.toggled` form too (TorchScript's
    pipeline calls both forms). ``meta["grad"]`` records the marking. Raises ValueError for a share
    outside [0, 1].
    """
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"grad share must be in [0, 1], got {share!r}")
    if share == 0.0:
        return program
    rng = random.Random(f"aliasfuzz-grad:{seed}:{index}")
    if rng.random() >= share:
        return program
    written = _written_storages(program)
    from aliasfuzz.fuzz.optional import toggled

    other = toggled(program)  # TorchScript also calls the other form: it must write no leaf
    if written is not None and other is not None:
        more = _written_storages(other)
        written = None if more is None else written | more
    if written is None:
        return program
    floating = {s.name for s in program.storages if s.dtype in _FLOATING}
    mark = {t.name for t in program.inputs
            if t.storage in floating and t.storage not in written and not t.none}
    if not mark or grad_exclusion(program, mark) is not None:
        return program
    from dataclasses import replace

    from aliasfuzz.fuzz.ir import Program

    inputs = tuple(replace(t, requires_grad=True) if t.name in mark else t for t in program.inputs)
    marked = Program(program.storages, inputs, program.body, program.outputs,
                     {**program.meta, "grad": True})
    from aliasfuzz.fuzz.validate import NoEagerMeaning, infer

    try:  # eager's autograd may refuse the marked program (fuzz/gradflow.py's rules)
        infer(marked)
        if other is not None:  # in the form TorchScript's odd calls run too
            infer(toggled(marked))
    except NoEagerMeaning:
        return program
    return marked
