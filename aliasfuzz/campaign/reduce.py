"""Reductions of a program: the moves the shrinker draws, and what a shrunk finding still needs.

Each move makes a program simpler in one way; :mod:`.shrink` draws one choice per statement,
output and input and keeps the candidates that still fail. Body moves, per statement
(simplest first, :data:`DROP` < :data:`BYPASS` < the canonical rewrites < :data:`KEEP`):

* drop: the statement goes, and with it every later statement and output that uses a name
  it binds (transitively);
* bypass: the statement goes, but the names it binds are rebound to one of its arguments,
  so its users survive (and need only that argument: a drop of another one's producer
  leaves them) (:func:`bypass_targets`): an op that writes an argument (in-place,
  ``out=``) binds the argument it wrote, so the write disappears; a view, functional,
  scatter or factory op with one result binds its first argument of the result's shape and
  dtype (none: not bypassable). A statement that binds nothing (setitem, mutating custom
  ops, Triton launches) has nothing to rebind: its bypass is its drop;
* canonical rewrite (:func:`canonical_forms`): the statement is replaced by the canonical
  statement of what it does, so that the op kind a minimized finding keeps says what the
  failure needs and not which op happened to do it. A statement writing exactly one tensor
  argument (in-place, ``out=``, setitem forms, mutating custom ops, Triton launches with one
  written argument) becomes :data:`CANONICAL_WRITE`, ``add_.Scalar(t, other=1)`` on the
  argument ``t`` it wrote (``1.0`` on floating dtypes; none for bool), binding the name the
  original bound (an alias of ``t``, as the original's was); the write's extent becomes the
  whole of ``t``. A Triton launch writing two distinct arguments becomes the custom op
  ``fz.bump_pair`` on them (:func:`_kernel_pair`): a finding that needs a kernel writing
  two tensors, not Triton, then reproduces without a GPU (audit 51, ecaa4998b9). A
  functional or scatter statement with one result that bypass cannot replace becomes
  :data:`CANONICAL_CLONE`, ``clone`` of its first argument of the result's dtype (where
  the result's shape differs from every argument's: a shape equal but a dtype not is no
  clone's), then :data:`CANONICAL_FACTORY`, ``zeros`` of the result's shape and
  dtype (reading nothing: its argument only gives the device). A scatter that bypass can
  replace becomes ``clone`` of the argument the bypass would rebind to: the bypass makes
  the result an alias of it, the clone keeps it fresh (eleventh audit wave D, 2be6c01096:
  ``slice_scatter(x0, x0)`` over all of ``x0`` is ``x0.clone()`` for the bug, which needs a
  fresh result the reinplace pass then writes into the input). Only scatters: the same
  rewrite of every bypassable functional op cost 24-33 % more shrink executions on
  ``tests/unit/test_shrink.py``'s ten-statement program (29 -> 37, 15 -> 20), close to
  the campaign's budget of 40. A custom op that writes nothing and returns a fresh tensor
  (``fz.scaled``) becomes ``clone`` of its argument of the result's shape and dtype, fresh
  as the op's result was (fresh users 51/52's B9: 20e6e2b026's Dynamo crash reproduces with
  ``x0 * 2`` in its place). A statement that writes nothing and whose results nothing
  reads (in the program as found) becomes ``clone`` of the argument it reads, an input on a
  shared storage first: all it does is keep that input a graph input, so a dead ``movedim``,
  ``clone`` or ``slice_scatter`` of the second alias of a mutated input is one program, not
  three (H100 campaign of 2026-12-06: 15b880eb65, 526633d350, 58917cdc15, one bug filed
  three times). A statement whose result is read only as the tensor ``set_`` rebinds
  becomes ``zeros`` of its shape and dtype: the rebinding drops everything else it was
  (``clone``, ``unbind``: one bug filed as two entries by every campaign since the 34th).
  ``add_.Scalar``, ``clone``
  and ``zeros`` statements are canonical already and get no rewrite. A rewrite may not
  validate (a shape its users reject, a whole-tensor write where only part was allowed):
  the shrinker rejects that candidate like any other.

Input moves, per input (simplest first, :data:`DENSE` < :data:`OWN_STORAGE` < keep):

* drop if unused (a choice of its own per input, so that it never hides the layout moves):
  an input that no kept statement and no output names any more is removed from the
  signature. It is a move, not a clean-up: an unused input on a used one's storage still
  changes what AOTAutograd sees, so the drop may lose the failure. The last live input
  stays;

* own storage (un-alias): an input sharing its storage with another input is moved to a copy
  of that storage (same spec and init under a fresh name, so the same values);
* dense: an input with a non-contiguous layout or a non-zero offset becomes a contiguous
  tensor of its shape over a storage of its own holding exactly the values the view had
  (init ``values``, computed with :func:`aliasfuzz.fuzz.eager.make_inputs`); it is offered
  only where those values survive the ``values`` round trip bit for bit;
* and, for an input that requires grad, dropping ``requires_grad``.

:func:`needed_features` names what a program keeps that these moves could have removed: on
a program the shrinker has minimized, each feature is one whose removal lost the failure
(unless the shrink budget ran out first). This module imports neither Hypothesis nor the
worker machinery (torch only through the op registry, as validation does).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec, contiguous_strides
from aliasfuzz.fuzz.ops.core import OpKind

__all__ = [
    "BYPASS",
    "CANONICAL",
    "CANONICAL_CLONE",
    "CANONICAL_FACTORY",
    "CANONICAL_WRITE",
    "DENSE",
    "DROP",
    "KEEP",
    "OWN_STORAGE",
    "bypass_targets",
    "canonical_forms",
    "dense_storages",
    "input_options",
    "needed_features",
    "reduce_inputs",
    "reduce_program",
    "statement_options",
]

DROP, BYPASS, KEEP = "drop", "bypass", "keep"
CANONICAL_WRITE, CANONICAL_CLONE, CANONICAL_FACTORY = (
    "canonical-write",
    "canonical-clone",
    "canonical-factory",
)
#: The canonical rewrites, simplest first (the order :func:`statement_options` offers them).
CANONICAL = (CANONICAL_WRITE, CANONICAL_CLONE, CANONICAL_FACTORY)
DENSE, OWN_STORAGE = "dense", "own-storage"

#: Per statement: index tuples into its arguments, one per bound name (``()``: it binds
#: nothing, so bypassing it is dropping it), or None (not bypassable).
Targets = tuple[tuple[int, ...] | None, ...]

#: Per statement: its canonical rewrites (action -> the replacing statement, written with the
#: original's argument names), in :data:`CANONICAL` order; empty where none applies.
Canonicals = tuple[dict[str, Op], ...]

#: The registry rows of the canonical statements (what a rewrite never rewrites again).
_CANONICAL_OPS = {CANONICAL_WRITE: "add_.Scalar", CANONICAL_CLONE: "clone", CANONICAL_FACTORY: "zeros"}

#: Op kinds whose statements write their mutated arguments (a write rewrites to ``add_``).
_WRITE_KINDS = frozenset({OpKind.INPLACE, OpKind.OUT, OpKind.CUSTOM, OpKind.TRITON})

#: Op kinds whose statements return fresh memory read from their arguments.
_PRODUCER_KINDS = frozenset({OpKind.FUNCTIONAL, OpKind.SCATTER})

_FLOAT_DTYPES = frozenset({"float32", "float64", "float16", "bfloat16"})


# -- body moves ------------------------------------------------------------------------
def bypass_targets(program: Program) -> Targets:
    """Per statement of ``program``, the argument each of its bound names is rebound to.

    From the op registry's row (:class:`~aliasfuzz.fuzz.ops.core.OpDef`) and the validated
    layouts: an op with mutated arguments (``mutates``) that binds one name per mutated
    argument returns those arguments (``add_``, ``mul.out``): its names map to them in order;
    an op that mutates nothing and binds one name maps it to its first argument whose
    shape and dtype equal the result's; every mapping must keep shape and dtype (renaming
    must not change what later statements see). ``()`` for a statement binding no name,
    None where no argument fits. Raises :class:`~aliasfuzz.errors.InvalidArgument` when
    ``program`` does not validate.
    """
    from aliasfuzz.fuzz.validate import infer

    return tuple(_targets(step) for step in infer(program).steps)


def _targets(step) -> tuple[int, ...] | None:
    outs = step.outs
    if not outs:
        return ()
    mutated = step.opdef.mutated_indices(len(step.args))
    if mutated:
        picks = tuple(mutated) if len(mutated) == len(outs) else None
    elif len(outs) == 1:
        picks = next(((j,) for j, a in enumerate(step.args) if _same_type(a, outs[0])), None)
    else:
        picks = None
    if picks is None or not all(
        _same_type(step.args[j], o) for j, o in zip(picks, outs, strict=True)
    ):
        return None
    return picks


def _same_type(a, b) -> bool:
    return a is not None and b is not None and (a.shape, a.dtype) == (b.shape, b.dtype)


def canonical_forms(program: Program) -> Canonicals:
    """Per statement of ``program``, its canonical rewrites (see the module docstring).

    From the validated layouts: a write is a statement of kind ``inplace``, ``out``,
    ``custom`` or ``triton`` with exactly one written argument position
    (:meth:`~aliasfuzz.fuzz.ops.core.OpDef.mutated_indices`; a launch given one tensor in
    two written positions has two) of a non-bool dtype, binding no name or one name of the
    written argument's shape and dtype; its rewrite is ``add_.Scalar(t, other=1 | 1.0)``
    binding that name (or a fresh one). A producer is a ``functional`` or ``scatter``
    statement with one result and no bypass target (:func:`bypass_targets`); its rewrites
    are ``clone`` of its first argument of the result's dtype, offered where the result's
    shape differs from every argument's, and ``zeros`` of the result's shape and dtype with
    the statement's first argument as its device. A statement whose op is already one of
    these gets none. Raises :class:`~aliasfuzz.errors.InvalidArgument` when ``program``
    does not validate.
    """
    from aliasfuzz.fuzz.validate import infer

    taken = _names(program)
    on_shared = _shared_storages(program)
    shared = {t.name for t in _live(program) if t.storage in on_shared}
    read_later = _read_after(program)
    rebound = _rebound_only(program)
    out = []
    for i, step in enumerate(infer(program).steps):
        if step.op.out and step.op.out[0] in rebound and step.op.op != _CANONICAL_OPS[
                CANONICAL_FACTORY]:
            forms = _rebound_producer(step)
        elif step.op.op in _CANONICAL_OPS.values():
            forms = {}
        else:
            dead = bool(step.op.out) and not set(step.op.out) & read_later[i]
            forms = (dead and _dead_reader(step, shared)) or _canonical(step, taken)
        taken |= {o for op in forms.values() for o in op.out}
        out.append(forms)
    return tuple(out)


#: Ops that replace every piece of their first argument's metadata (storage, offset, sizes,
#: strides) and read none of its data: what that argument was is lost.
_REBINDS = frozenset({"set_", "set_.storage"})


def _rebound_only(program: Program) -> set[str]:
    """The names of one-result statements of ``program`` that are read only as the first
    argument of :data:`_REBINDS` ops (and are no output)."""
    uses: dict[str, list[tuple[str, int]]] = {}
    for op in program.body:
        for j, a in enumerate(op.args):
            uses.setdefault(a, []).append((op.op, j))
    single = {op.out[0] for op in program.body if len(op.out) == 1}
    return {name for name in single - set(program.outputs)
            if uses.get(name) and all(o in _REBINDS and j == 0 for o, j in uses[name])}


def _rebound_producer(step) -> dict[str, Op]:
    """The canonical form of a statement whose result is only rebound (``x.set_(y)``):
    ``zeros`` of its shape and dtype, the device from its first tensor argument (none: no
    form). The statement's op, views and values are lost in the rebinding (audit 50 and
    campaigns 34-51: ``v = x.clone(); v.set_(x)`` and ``v = x.unbind(1)[0]; v.set_(x)``,
    one bug filed as two entries in every campaign)."""
    op, res = step.op, step.outs[0] if step.outs else None
    tensors = [a for a, m in zip(op.args, step.args, strict=True) if m is not None]
    if res is None or not tensors:
        return {}
    params = {"shape": list(res.shape), "dtype": res.dtype}
    return {CANONICAL_FACTORY: Op("zeros", (tensors[0],), params, op.out)}


def _read_after(program: Program) -> list[set[str]]:
    """Per statement, the names a later statement or an output reads."""
    later: set[str] = set(program.outputs)
    out: list[set[str]] = []
    for op in reversed(program.body):
        out.append(set(later))
        later |= set(op.args)
    return out[::-1]


def _dead_reader(step, shared: set[str]) -> dict[str, Op]:
    """The canonical form of a statement that writes nothing and whose results nothing reads:
    ``clone`` of the argument it reads, an input on a shared storage first (the statement
    only keeps that input a graph input: H100 campaign of 2026-12-06, one bug filed three
    times as a dead ``movedim``, ``clone`` and ``slice_scatter`` of the second alias).
    None (``{}``) for a statement that writes, binds no name or reads no tensor."""
    kind = step.opdef.kind
    reads_only = kind in _PRODUCER_KINDS | {OpKind.VIEW} or (
        kind is OpKind.CUSTOM and not step.opdef.mutated_indices(len(step.args)))
    op = step.op
    tensors = [a for a, m in zip(op.args, step.args, strict=True) if m is not None]
    if not reads_only or not op.out or not tensors:
        return {}
    src = next((a for a in tensors if a in shared), tensors[0])
    return {CANONICAL_CLONE: Op("clone", (src,), {}, op.out[:1])}


def _canonical(step, taken: set[str]) -> dict[str, Op]:
    op, kind, outs = step.op, step.opdef.kind, step.outs
    if kind in _WRITE_KINDS:
        mutated = step.opdef.mutated_indices(len(step.args))
        if kind == OpKind.TRITON and len(mutated) == 2 and not outs:
            return _kernel_pair([step.args[i] for i in mutated], [op.args[i] for i in mutated])
        if kind == OpKind.CUSTOM and not mutated and len(outs) == 1 and outs[0] is not None:
            # a custom op that writes nothing and returns a fresh tensor (fz.scaled): clone of
            # its argument of the result's type keeps the result fresh, so a finding that
            # needs no custom op loses it (fresh users 51/52's B9, 20e6e2b026: its
            # mylib::scaled was six lines of noise in an upstream repro)
            src = next((a for a, m in zip(op.args, step.args, strict=True)
                        if m is not None and _same_type(outs[0], m)), None)
            return {CANONICAL_CLONE: Op("clone", (src,), {}, op.out)} if src else {}
        if len(mutated) != 1 or len(outs) > 1:
            return {}
        t = step.args[mutated[0]]
        if t is None or t.dtype == "bool" or (outs and not _same_type(outs[0], t)):
            return {}
        name = op.out[0] if op.out else _fresh(f"{op.args[mutated[0]]}_w", taken)
        other = 1.0 if t.dtype in _FLOAT_DTYPES else 1
        write = Op("add_.Scalar", (op.args[mutated[0]],), {"other": other}, (name,))
        return {CANONICAL_WRITE: write}
    if kind not in _PRODUCER_KINDS or len(outs) != 1 or outs[0] is None:
        return {}
    target = _targets(step)
    if target and kind == OpKind.SCATTER:  # the bypass aliases the argument; a copy is fresh
        return {CANONICAL_CLONE: Op("clone", (op.args[target[0]],), {}, op.out)}
    if target:
        return {}
    res = outs[0]
    tensors = [(a, m) for a, m in zip(op.args, step.args, strict=True) if m is not None]
    if not tensors:
        return {}
    forms = {}
    if all(m.shape != res.shape for _, m in tensors):
        src = next((a for a, m in tensors if m.dtype == res.dtype), None)
        if src is not None:
            forms[CANONICAL_CLONE] = Op("clone", (src,), {}, op.out)
    params = {"shape": list(res.shape), "dtype": res.dtype}
    forms[CANONICAL_FACTORY] = Op("zeros", (tensors[0][0],), params, op.out)
    return forms


#: The custom op a user Triton launch writing two arguments becomes (:func:`_kernel_pair`).
_PAIR_WRITE = "fz.bump_pair"


def _kernel_pair(metas: list, names: list[str]) -> dict[str, Op]:
    """The canonical write of a user Triton launch that writes two distinct, non-bool
    tensor arguments (``names``, their layouts ``metas``): :data:`_PAIR_WRITE` on both
    (``p += 1; q *= 3``, a custom op with ``mutates_args=("p", "q")``), a statement that
    runs on every device. Audit 51, ecaa4998b9: the scheduler's ``KeyError`` needed a
    kernel writing ``x`` and a temporary, not Triton; found on CPU, the repro asked for a
    GPU. A finding that needs the kernel itself (its strides, its launch, one tensor given
    twice) loses the failure with the rewrite, which the shrinker then rejects."""
    if len(set(names)) != 2 or any(m is None or m.dtype == "bool" for m in metas):
        return {}
    return {CANONICAL_WRITE: Op(_PAIR_WRITE, tuple(names), {}, ())}


def statement_options(
    targets: Targets, canonicals: Canonicals | None = None
) -> tuple[tuple[str, ...], ...]:
    """Per statement, its actions simplest first: drop, bypass (where it differs), its
    canonical rewrites (``canonicals``, default none), keep."""
    canonicals = canonicals or ({},) * len(targets)
    return tuple(
        (DROP, *((BYPASS,) if t else ()), *[a for a in CANONICAL if a in c], KEEP)
        for t, c in zip(targets, canonicals, strict=True)
    )


def reduce_program(
    program: Program,
    actions: Sequence[str | bool],
    keep_outputs: Sequence[bool],
    targets: Targets | None = None,
    canonicals: Canonicals | None = None,
) -> Program:
    """``program`` with each statement dropped, bypassed, rewritten or kept, and outputs removed.

    ``actions`` has one entry per statement: :data:`DROP`, :data:`BYPASS`, one of
    :data:`CANONICAL` or :data:`KEEP` (``False``/``True`` mean drop/keep); ``keep_outputs``
    one flag per output. A statement using a name bound by a dropped statement is dropped
    too (transitively), and so is an output naming one; names bound by a bypassed statement
    are replaced, in later statements and outputs, by the arguments ``targets`` (default
    :func:`bypass_targets`) gives; an output renamed to one already returned is returned
    once. A rewritten statement is replaced by its form in ``canonicals`` (default
    :func:`canonical_forms`), its arguments renamed like any statement's. Raises
    :class:`ValueError` on a list of the wrong length, an unknown action, or a bypass or
    rewrite the statement does not have. The result is not validated.
    """
    if len(actions) != len(program.body) or len(keep_outputs) != len(program.outputs):
        raise ValueError("one action per statement and one flag per output")
    acts = [{True: KEEP, False: DROP}.get(a, a) if isinstance(a, bool) else a for a in actions]
    if not set(acts) <= {DROP, BYPASS, KEEP, *CANONICAL}:
        raise ValueError(f"unknown statement action in {sorted(set(map(str, acts)))}")
    if targets is None:
        targets = bypass_targets(program) if BYPASS in acts else (None,) * len(acts)
    if canonicals is None:
        canonicals = canonical_forms(program) if set(CANONICAL) & set(acts) else ({},) * len(acts)
    rename: dict[str, str] = {}
    gone: set[str] = set()
    body = []
    for i, (op, act, tgt) in enumerate(zip(program.body, acts, targets, strict=True)):
        if act == BYPASS and tgt is None:
            raise ValueError(f"statement {i} ({op.op}) cannot be bypassed")
        if act in CANONICAL:
            if act not in canonicals[i]:
                raise ValueError(f"statement {i} ({op.op}) has no {act} rewrite")
            op = canonicals[i][act]
        args = tuple(rename.get(a, a) for a in op.args)
        # a bypassed statement's names need only the arguments they are rebound to
        needs = {args[j] for j in tgt} if act == BYPASS and tgt else set(args)
        if gone & needs or act == DROP or (act == BYPASS and not tgt):
            gone |= set(op.out)
        elif act == BYPASS:
            rename.update((o, args[j]) for o, j in zip(op.out, tgt, strict=True))
        else:
            body.append(op if args == op.args else replace(op, args=args))
    outputs: list[str] = []
    for o, k in zip(program.outputs, keep_outputs, strict=True):
        name = rename.get(o, o)
        if k and name not in gone and name not in outputs:
            outputs.append(name)
    return program.with_body(tuple(body), tuple(outputs))


# -- input moves -----------------------------------------------------------------------
def _live(program: Program) -> list[TensorSpec]:
    return [t for t in program.inputs if not t.none]


def _shared_storages(program: Program) -> set[str]:
    counts = Counter(t.storage for t in _live(program))
    return {s for s, n in counts.items() if n > 1}


def _strided(t: TensorSpec) -> bool:
    """Whether an input is not a plain contiguous tensor: an offset, or a non-row-major
    stride on a dimension of size > 1 (``torch.Tensor.is_contiguous``'s rule)."""
    row_major = contiguous_strides(t.shape)
    return t.offset != 0 or any(
        n > 1 and s != c for n, s, c in zip(t.shape, t.stride, row_major, strict=True)
    )


def dense_storages(program: Program) -> dict[str, StorageSpec]:
    """Per strided input of ``program`` (:func:`_strided`), the ``values`` storage of a
    contiguous tensor holding the elements the input has at the call, in row-major order.

    The storage is named ``<storage>_<input>`` (made unique); dtype as the input's
    storage. Values come from :func:`~aliasfuzz.fuzz.eager.make_inputs` (so exactly the
    eager inputs); an input whose values do not come back bit for bit through a ``values``
    storage (integers beyond 2**53, non-finite floats) gets none. Imports torch.
    """
    import torch

    from aliasfuzz.fuzz.eager import make_inputs

    strided = [(i, t) for i, t in enumerate(program.inputs) if not t.none and _strided(t)]
    if not strided:
        return {}
    tensors = make_inputs(program)
    taken = _names(program)
    out = {}
    for i, t in strided:
        view = tensors[i].detach()
        flat = torch.empty(t.numel, dtype=view.dtype).copy_(view.reshape(-1))  # stride 1
        data = [int(v) if isinstance(v, bool) else v for v in flat.tolist()]
        if not all(isinstance(v, int) or math.isfinite(v) for v in data):
            continue
        st = program.storage_by_name[t.storage]
        spec = StorageSpec(
            _fresh(_own_name(t.storage, t.name), taken), t.numel, st.dtype, "values", {"data": data}
        )
        rebuilt = make_inputs(
            Program((spec,), (TensorSpec("x", spec.name, (t.numel,), (1,)),), ())
        )[0]
        if rebuilt.dtype == flat.dtype and torch.equal(
            rebuilt.view(torch.uint8), flat.view(torch.uint8)
        ):
            taken.add(spec.name)
            out[t.name] = spec
    return out


def _names(program: Program) -> set[str]:
    return (
        {s.name for s in program.storages}
        | {t.name for t in program.inputs}
        | {o for op in program.body for o in op.out}
    )


def _own_name(storage: str, name: str) -> str:
    """The name of input ``name``'s own storage, made from ``storage``'s: ``s0_x0``, and
    ``s0_x0`` again, not ``s0_x0_x0``, for a storage the shrinker named so before (a mutant
    of a shrunk corpus program; fresh user 49's B12)."""
    return storage if storage.endswith(f"_{name}") else f"{storage}_{name}"


def _fresh(base: str, taken: Collection[str]) -> str:
    name, k = base, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    return name


def input_options(program: Program, dense: Mapping[str, StorageSpec]) -> dict[str, tuple[str, ...]]:
    """Per input that a layout move changes, its actions simplest first, ending with keep:
    :data:`DENSE` where ``dense`` (:func:`dense_storages`) has a storage for it, then
    :data:`OWN_STORAGE` where it shares its storage with another input."""
    shared = _shared_storages(program)
    out = {}
    for t in _live(program):
        opts = ((DENSE,) if t.name in dense else ()) + (
            (OWN_STORAGE,) if t.storage in shared else ()
        )
        if opts:
            out[t.name] = (*opts, KEEP)
    return out


def reduce_inputs(
    program: Program,
    layouts: Mapping[str, str],
    drop_grad: Collection[str] = (),
    dense: Mapping[str, StorageSpec] | None = None,
    drop_unused: Collection[str] = (),
) -> Program:
    """``program`` with its inputs moved as ``layouts`` says (input name -> :data:`DENSE`,
    :data:`OWN_STORAGE` or :data:`KEEP`) and ``requires_grad`` dropped on ``drop_grad``; each input of ``drop_unused`` that no statement
    argument and no output of ``program`` names is removed (all but the first when that
    would remove every live input).

    :data:`OWN_STORAGE` moves the input to a copy of its storage named
    ``<storage>_<input>`` (made unique); :data:`DENSE` to ``dense[name]`` (default
    :func:`dense_storages`) with a contiguous layout at offset 0. A storage that no input
    uses any more is removed; a new storage follows the one it came from. Raises
    :class:`ValueError` on an unknown input or action, or a dense move without a dense
    storage. The result is not validated.
    """
    names = {t.name for t in program.inputs}
    if not set(layouts) | set(drop_grad) | set(drop_unused) <= names:
        raise ValueError(
            f"unknown inputs {sorted(set(layouts) | set(drop_grad) | set(drop_unused) - names)}"
        )
    if not set(layouts.values()) <= {DENSE, OWN_STORAGE, KEEP}:
        raise ValueError(f"unknown input action in {sorted(set(layouts.values()))}")
    if dense is None and DENSE in layouts.values():
        dense = dense_storages(program)
    taken = _names(program) | {
        dense[n].name for n, a in layouts.items() if a == DENSE and n in dense
    }
    named = {a for op in program.body for a in op.args} | set(program.outputs)
    unused = [t.name for t in _live(program) if t.name in drop_unused and t.name not in named]
    if unused and len(unused) == len(_live(program)):
        unused = unused[1:]
    added: dict[str, list[StorageSpec]] = {}
    inputs = []
    for t in program.inputs:
        if t.name in unused:
            continue
        act = layouts.get(t.name, KEEP)
        st = program.storage_by_name[t.storage]
        if act == DENSE:
            if not dense or t.name not in dense:
                raise ValueError(f"input {t.name} has no dense storage")
            new = dense[t.name]
            t = replace(t, storage=new.name, stride=contiguous_strides(t.shape), offset=0)
        elif act == OWN_STORAGE:
            new = replace(
                st, name=_fresh(_own_name(t.storage, t.name), taken), init_args=dict(st.init_args)
            )
            t = replace(t, storage=new.name)
        if act != KEEP:
            taken.add(new.name)
            added.setdefault(st.name, []).append(new)
        inputs.append(replace(t, requires_grad=False) if t.name in drop_grad else t)
    used = {t.storage for t in inputs}
    before = {t.storage for t in program.inputs}
    storages = []
    for s in program.storages:
        if s.name in used or s.name not in before:
            storages.append(s)
        storages += added.get(s.name, [])
    return Program(
        tuple(storages), tuple(inputs), program.body, program.outputs, dict(program.meta)
    )


# -- features --------------------------------------------------------------------------
def needed_features(program: Program) -> dict[str, Any]:
    """What ``program`` keeps that the shrinker's moves could remove, as sorted lists.

    ``op_kinds``: the :class:`~aliasfuzz.fuzz.ops.core.OpKind` values of its statements
    (drop and bypass remove statements; a canonical rewrite turns a write of any kind into
    ``inplace`` and a producer into ``functional`` or ``factory``, so on a minimized program
    a kind other than those is one whose rewrite lost the failure). ``input_features``:

    * ``aliased-inputs`` when two inputs (not ``None``) share a storage: un-aliasing
      removes it, and aliased inputs are what functionalization and the reinplace pass
      must get right (synthetic bases, mutated-input copy-back);
    * ``strided-inputs`` when an input is non-contiguous or at a non-zero offset:
      densifying removes it, and layouts decide what a view or an ``out=`` write touches;
    * ``requires-grad`` when an input requires grad: dropping it removes it, and it moves
      AOTAutograd from the inference graph to the joint one.

    Dtypes are not features: no move changes one, so a dtype left in a minimized program
    is as likely incidental as needed (``corpus/miscompile-aot_eager-e60bdbfb27`` keeps an
    unused bool input), and the one dtype-bound root cause audited (int64 ``addcmul_``) is
    told apart by its stage. On a program :func:`~.shrink.shrink` minimized, each feature
    is needed in the greedy sense: the single moves that would remove it were tried and
    lost the failure; an ``inplace``, ``functional`` or ``factory`` kind may stand for any
    write or producer (the canonical forms). It is not where the budget ran out, where the
    finding did not reproduce (left unshrunk), where densifying was not offered (values that
    a ``values`` storage cannot hold), or for a kind whose only statements can be neither
    bypassed nor rewritten and feed ones that stay (a view of another shape, a multi-result
    view such as ``split``). Raises
    :class:`~aliasfuzz.errors.InvalidArgument` on an op the registry does not know.
    """
    from aliasfuzz.fuzz.ops import lookup

    live = _live(program)
    rules = {
        "aliased-inputs": bool(_shared_storages(program)),
        "strided-inputs": any(_strided(t) for t in live),
        "requires-grad": any(t.requires_grad for t in live),
    }
    return {
        "op_kinds": sorted({lookup(op.op).kind.value for op in program.body}),
        "input_features": sorted(f for f, present in rules.items() if present),
    }
