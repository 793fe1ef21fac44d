"""Mutational generation: a valid neighbour of a program that is known to matter.

Random generation spends its budget far from where bugs are; the corpus (findings) and its
seeds (the IR twins of public bug reports, ``corpus/seeds/``) are a map of where they are
(issue 15). :func:`mutate` takes one such program and applies one structural change, drawn
from :data:`OPERATORS`:

=====================  =======================================================================
operator               change
=====================  =======================================================================
``swap-op``            one statement's op becomes another registry row of its kind (same
                       arguments and result count, parameters drawn by the row's ``gen``)
``relayout-input``     an input that owns its storage gets another layout of the same shape:
                       an offset, gaps between elements, or a permuted (column-major) order
``alias-inputs``       two inputs of one dtype move onto one storage (overlapping or not)
``insert-view``        a same-shape ``view`` goes between a producer and one of its readers
``drop-statement``     a statement nobody reads is removed (not one that writes a tensor,
                       in a program with ``empty_like`` memory to fill)
``move-statement``     two neighbouring independent statements trade places (a mutation moves
                       earlier or later)
``static-twin``        the same program compiled with static shapes, drawn first half the time
                       for a source compiled with dynamic ones (:data:`STATIC_TWIN`)
=====================  =======================================================================

A crash under ``torch.compile(dynamic=True)`` stops the program there, and can mask what
static shapes do to the same program (audit 36: a dynamic-shape crash of an
``index_reduce(out=)`` program hid Inductor's static miscompile of it). An entry compiled
with dynamic shapes (its ``meta["dynamic"]``) is therefore a source whose static twin the
next campaign that mutates runs, as a mutant of its own (``mutation: static-twin``).

Every mutant is checked with :func:`aliasfuzz.fuzz.validate.infer`, the rules every
generated program obeys (one eager meaning included); a change that fails is dropped and
another one drawn, a bounded number of times. The result is a pure function of the program
and the ``random.Random`` stream, as generation is (:mod:`aliasfuzz.fuzz.sample`).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

from aliasfuzz.errors import GenerationFailure, InvalidArgument
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec, contiguous_strides
from aliasfuzz.fuzz.ops import REGISTRY, lookup
from aliasfuzz.fuzz.validate import infer

__all__ = ["OPERATORS", "STATIC_TWIN", "mutate"]

Operator = Callable[[Program, random.Random], Program | None]


def _fresh_name(program: Program) -> str:
    taken = {n for op in program.body for n in op.out} | {t.name for t in program.inputs}
    k = len(taken)
    while f"v{k}" in taken:
        k += 1
    return f"v{k}"


def _reads(op: Op, names: set[str]) -> bool:
    return any(a in names for a in op.args)


def _swap_op(p: Program, rng: random.Random) -> Program | None:
    from aliasfuzz.fuzz.sample import RandomDraw
    from aliasfuzz.fuzz.strategies import _result_count

    if not p.body:
        return None
    k = rng.randrange(len(p.body))
    op = p.body[k]
    d = lookup(op.op)
    peers = [r for r in REGISTRY.values()
             if r.kind == d.kind and r.name != d.name and r.gen is not None
             and (r.arity == len(op.args) if isinstance(r.arity, int)
                  else r.arity[0] <= len(op.args) <= r.arity[1])]
    if not peers:
        return None
    r = rng.choice(peers)
    try:
        values = infer(p.with_body(p.body[:k], ())).values
        metas = [values[a] for a in op.args]
        if any(m is None for m in metas) or (r.accepts is not None and not r.accepts(tuple(metas))):
            return None
        params = r.gen(RandomDraw(rng), metas)
        if _result_count(r, metas, params) != len(op.out):
            return None
    except (GenerationFailure, InvalidArgument, KeyError):
        return None
    body = list(p.body)
    body[k] = Op(r.name, op.args, params, op.out)
    return p.with_body(tuple(body))


def _owners(p: Program) -> dict[str, list[TensorSpec]]:
    out: dict[str, list[TensorSpec]] = {}
    for t in p.inputs:
        out.setdefault(t.storage, []).append(t)
    return out


def _with_inputs(p: Program, storages: list[StorageSpec], inputs: list[TensorSpec]) -> Program:
    used = {t.storage for t in inputs}
    return Program(tuple(s for s in storages if s.name in used), tuple(inputs), p.body,
                   p.outputs, dict(p.meta))


def _resized(s: StorageSpec, numel: int) -> StorageSpec:
    if s.init == "values":  # its data list has exactly numel numbers: count from 0 instead
        return dataclasses.replace(s, numel=numel, init="arange", init_args={})
    return dataclasses.replace(s, numel=numel)


def _relayout_input(p: Program, rng: random.Random) -> Program | None:
    owners = _owners(p)
    alone = [t for t in p.inputs if len(owners[t.storage]) == 1 and not t.none and t.numel > 1]
    if not alone:
        return None
    t = rng.choice(alone)
    how = rng.choice(("offset", "gaps", "permuted"))
    if how == "offset":
        new = dataclasses.replace(t, offset=t.offset + rng.randint(1, 5))
    elif how == "gaps":
        new = dataclasses.replace(t, stride=tuple(s * 2 if n > 1 else s
                                                  for n, s in zip(t.shape, t.stride, strict=True)))
    else:
        if len(t.shape) < 2:
            return None
        rev = contiguous_strides(tuple(reversed(t.shape)))
        new = dataclasses.replace(t, stride=tuple(reversed(rev)))
    if new == t:
        return None
    storages = [(_resized(s, max(s.numel, new.span)) if s.name == t.storage else s)
                for s in p.storages]
    return _with_inputs(p, storages, [new if x is t else x for x in p.inputs])


def _alias_inputs(p: Program, rng: random.Random) -> Program | None:
    owners = _owners(p)
    by = p.storage_by_name
    alone = [t for t in p.inputs if len(owners[t.storage]) == 1 and not t.none]
    pairs = [(a, b) for a in alone for b in alone
             if a is not b and by[a.storage].dtype == by[b.storage].dtype]
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    host = by[a.storage]
    # anywhere from the start of a's storage to just past its end: overlapping or disjoint
    offset = rng.randint(0, host.numel)
    moved = dataclasses.replace(b, storage=a.storage, offset=offset)
    storages = [(_resized(s, max(s.numel, moved.span)) if s.name == a.storage else s)
                for s in p.storages]
    return _with_inputs(p, storages, [moved if x is b else x for x in p.inputs])


def _insert_view(p: Program, rng: random.Random) -> Program | None:
    sites = [(k, j) for k, op in enumerate(p.body) for j in range(len(op.args))]
    if not sites:
        return None
    k, j = rng.choice(sites)
    op = p.body[k]
    try:
        meta = infer(p.with_body(p.body[:k], ())).values.get(op.args[j])
    except InvalidArgument:
        return None
    if meta is None:
        return None
    name = _fresh_name(p)
    view = Op("view", (op.args[j],), {"shape": list(meta.shape)}, (name,))
    args = list(op.args)
    args[j] = name
    return p.with_body((*p.body[:k], view, Op(op.op, tuple(args), op.params, op.out), *p.body[k + 1:]))


def _drop_statement(p: Program, rng: random.Random) -> Program | None:
    later_reads = [set() for _ in p.body]
    seen: set[str] = set(p.outputs)
    for k in range(len(p.body) - 1, -1, -1):
        later_reads[k] = set(seen)
        seen |= set(p.body[k].args)
    # a program with memory empty_like left uninitialized keeps every statement that writes:
    # one of them fills that memory, and without it the program reads garbage, which has no
    # single eager meaning (seed b16: dropping tk.flat_add(z, other, out), whose statement
    # binds nothing, returned the bare empty_like)
    uninit = any(op.op == "empty_like" for op in p.body)
    unread = [k for k, op in enumerate(p.body) if not set(op.out) & later_reads[k]
              and not (uninit and lookup(op.op).mutated_indices(len(op.args)))]
    if len(p.body) < 2 or not unread:
        return None
    k = rng.choice(unread)
    return p.with_body(p.body[:k] + p.body[k + 1:])


def _move_statement(p: Program, rng: random.Random) -> Program | None:
    swaps = [k for k in range(len(p.body) - 1) if not _reads(p.body[k + 1], set(p.body[k].out))]
    if not swaps:
        return None
    k = rng.choice(swaps)
    body = list(p.body)
    body[k], body[k + 1] = body[k + 1], body[k]
    return p.with_body(tuple(body))


def _static_twin(p: Program) -> Program:
    meta = {k: v for k, v in p.meta.items() if k != "dynamic"}
    return dataclasses.replace(p, meta={**meta, "mutation": STATIC_TWIN})


#: The operator that undoes ``meta["dynamic"]``; not one of :data:`OPERATORS`, whose uniform
#: draw it would change for every other source.
STATIC_TWIN = "static-twin"

#: name -> operator; each returns a candidate mutant (maybe invalid) or None when it does
#: not apply to the program.
OPERATORS: dict[str, Operator] = {
    "swap-op": _swap_op,
    "relayout-input": _relayout_input,
    "alias-inputs": _alias_inputs,
    "insert-view": _insert_view,
    "drop-statement": _drop_statement,
    "move-statement": _move_statement,
}


def mutate(program: Program, rng: random.Random, tries: int = 12) -> Program | None:
    """One valid mutant of ``program``, or None when ``tries`` draws gave none.

    Each try draws an operator of :data:`OPERATORS` and keeps its mutant only when it
    type-checks and has one eager meaning (:func:`~aliasfuzz.fuzz.validate.infer`; the
    outputs are those of ``program``, as they remain defined). The mutant's ``meta`` is
    ``program``'s plus ``mutation`` (the operator's name). Deterministic in ``program`` and
    the state of ``rng``. A ``program`` compiled with dynamic shapes (``meta["dynamic"]``)
    draws its static twin (:data:`STATIC_TWIN`) first with probability one half; the draw
    is skipped for every other program, whose stream stays what it was.
    """
    names = list(OPERATORS)
    if program.meta.get("dynamic") and rng.random() < 0.5:
        return _static_twin(program)
    for _ in range(tries):
        name = rng.choice(names)
        try:
            m = OPERATORS[name](program, rng)
            if m is None or m == program:
                continue
            infer(m)
        except (InvalidArgument, GenerationFailure):
            continue
        return Program(m.storages, m.inputs, m.body, m.outputs, {**m.meta, "mutation": name})
    return None
