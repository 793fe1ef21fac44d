"""Bundles: several independent programs as one program, so that one compile judges them all.

Issue 16: a compile's fixed cost (Dynamo, AOTAutograd and Inductor's per-graph work) is
paid once per graph, and most generated programs are small. :func:`bundle` renders K
programs into one :class:`~aliasfuzz.fuzz.ir.Program` whose members share no storage:
member ``j``'s storages, inputs and bound names are prefixed ``b<j>_``, its statements
follow member ``j-1``'s, and the bundle returns every member's outputs in order. Each
storage keeps its fill (``init``, ``init_args``), so a member's inputs hold the values they
hold when it runs alone.

What the campaign does with a bundle (:meth:`aliasfuzz.campaign.pool.Pool._bundle`): a
pipeline that judges the whole bundle ``ok`` stands for every member; any other verdict
splits the bundle in halves until one program is left, judged as it is without bundles.
So every finding comes from a program judged on its own; what bundling can change is
only whether a member's failure shows inside the bundle (compiled in one graph with other
programs, a member's graph is fused and scheduled with theirs), which
``tests/e2e/test_campaign_bundle.py`` and ``bench/bundle_cost.py`` measure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec

__all__ = ["bundle", "members_in", "unbundle", "unbundleable"]

#: a name of bundle member ``j`` (group 1), as :func:`bundle` prefixes it
_MEMBER_NAME = re.compile(r"\bb(\d+)_[A-Za-z0-9_]")
#: the rendered function's frame in a stack trace, and the statement's source line after it
_PROGRAM_LINE = re.compile(r'File "[^"]*", line \d+, in \w+\n\s*(\S[^\n]*)')


def unbundleable(program: Program) -> str | None:
    """Why ``program`` is never put in a bundle, or None when it may be.

    Left out: a user Triton kernel (its launch does not lower on every device, and a bundle
    that cannot compile would split every time), an op that breaks Dynamo's graph by
    construction (data-dependent control flow, ``torch.autograd.grad``: the bundle would be
    several graphs, cut where the member's is not), an input that requires grad (the
    backward graph's comparison is per program) and a program compiled with dynamic shapes
    (``meta["dynamic"]``: the options of the whole compile are the member's).
    """
    from aliasfuzz.fuzz.ops import OpKind, lookup

    if program.meta.get("dynamic"):
        return "dynamic shapes"
    if any(t.requires_grad for t in program.inputs):
        return "an input requires grad"
    for op in program.body:
        d = lookup(op.op)
        if d.kind is OpKind.TRITON:
            return "user Triton kernel"
        if d.kind is OpKind.CONTROL or "graph_break" in d.tags or op.op == "autograd_grad":
            return "graph break by construction"
    return None


def _member(program: Program, prefix: str) -> Program:
    """``program`` with every storage, input and bound name prefixed ``prefix``."""

    def n(name: str) -> str:
        return prefix + name

    storages = tuple(StorageSpec(n(s.name), s.numel, s.dtype, s.init, dict(s.init_args))
                     for s in program.storages)
    inputs = tuple(TensorSpec(n(t.name), n(t.storage), t.shape, t.stride, t.offset,
                              t.requires_grad, t.optional, t.none) for t in program.inputs)
    body = tuple(Op(op.op, tuple(n(a) for a in op.args), dict(op.params),
                    tuple(n(o) for o in op.out)) for op in program.body)
    return Program(storages, inputs, body, tuple(n(o) for o in program.outputs))


def bundle(programs: Sequence[Program]) -> Program:
    """One program running ``programs`` one after the other on disjoint storages.

    Its storages, inputs, statements and outputs are the members' in order, member ``j``'s
    names prefixed ``b<j>_`` (:func:`_member`); ``meta["bundle"]`` is the number of members,
    ``meta["statements"]`` their statement counts.
    Raises :class:`~aliasfuzz.errors.InvalidArgument` for fewer than two programs or for a
    member :func:`unbundleable` rejects (with its reason).
    """
    if len(programs) < 2:
        raise InvalidArgument(f"a bundle needs at least two programs, got {len(programs)}")
    parts = []
    for j, p in enumerate(programs):
        why = unbundleable(p)
        if why is not None:
            raise InvalidArgument(f"program {j} cannot be bundled: {why}")
        parts.append(_member(p, f"b{j}_"))
    return Program(
        tuple(s for p in parts for s in p.storages),
        tuple(t for p in parts for t in p.inputs),
        tuple(op for p in parts for op in p.body),
        tuple(o for p in parts for o in p.outputs),
        {"bundle": len(parts), "statements": [len(p.body) for p in parts]},
    )


def unbundle(program: Program) -> list[Program]:
    """The members of bundle ``program`` (:func:`bundle`), their names without the prefix;
    their ``meta`` is empty. Raises :class:`~aliasfuzz.errors.InvalidArgument` for a program
    that is not a bundle."""
    n, sizes = program.meta.get("bundle"), program.meta.get("statements")
    if not isinstance(n, int) or n < 2 or not isinstance(sizes, list) or len(sizes) != n \
            or sum(sizes) != len(program.body):
        raise InvalidArgument("not a bundle: meta has no member count and statement counts")

    def part(name: str) -> tuple[int, str]:
        m = re.match(r"b(\d+)_(.+)$", name)
        if m is None or int(m.group(1)) >= n:
            raise InvalidArgument(f"not a bundle: {name!r} names no member")
        return int(m.group(1)), m.group(2)

    def mine(j: int, names: Sequence[str]) -> bool:
        return all(part(x)[0] == j for x in names)

    out, start = [], 0
    for j in range(n):
        def bare(name: str) -> str:
            return part(name)[1]

        storages = tuple(StorageSpec(bare(s.name), s.numel, s.dtype, s.init, dict(s.init_args))
                         for s in program.storages if mine(j, [s.name]))
        inputs = tuple(TensorSpec(bare(t.name), bare(t.storage), t.shape, t.stride, t.offset,
                                  t.requires_grad, t.optional, t.none)
                       for t in program.inputs if mine(j, [t.name]))
        ops = program.body[start:start + sizes[j]]
        start += sizes[j]
        if not all(mine(j, [*op.args, *op.out]) for op in ops):
            raise InvalidArgument(f"not a bundle: member {j}'s statements name another's values")
        body = tuple(Op(op.op, tuple(bare(a) for a in op.args), dict(op.params),
                        tuple(bare(o) for o in op.out)) for op in ops)
        outputs = tuple(bare(o) for o in program.outputs if mine(j, [o]))
        out.append(Program(storages, inputs, body, outputs))
    return out


def members_in(stack_trace: str | None) -> set[int]:
    """The bundle members whose statements a stack trace's source lines name: for an FX
    node made while Dynamo traced a bundle (``node.meta["stack_trace"]``), the member whose
    statement made it (its line names only that member's values); empty when no line of the
    rendered program is in it (a node Inductor or AOTAutograd made of nothing traced)."""
    if not stack_trace:
        return set()
    return {int(j) for line in _PROGRAM_LINE.findall(stack_trace)
            for j in _MEMBER_NAME.findall(line)}
