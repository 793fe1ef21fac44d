"""The rule by which validation rejects a program (shared by the one-eager-meaning tests and
the op-family tests that check their rows reject through the general rule)."""

from __future__ import annotations

import pytest

from aliasfuzz.fuzz.ir import Program
from aliasfuzz.fuzz.validate import NoEagerMeaning, infer

__all__ = ["rejection_rule", "run_unchecked"]


def rejection_rule(program: Program) -> str:
    """The ``rule`` of the :class:`NoEagerMeaning` that :func:`infer` raises for ``program``;
    fails the calling test when ``program`` is accepted."""
    with pytest.raises(NoEagerMeaning) as e:
        infer(program)
    return e.value.rule


def run_unchecked(p: Program) -> None:
    """Run ``p``'s statements on eager inputs without validation (what eager says): the
    registry rows' ``apply`` in order; raises whatever eager raises."""
    from aliasfuzz.fuzz.eager import make_inputs
    from aliasfuzz.fuzz.ops import REGISTRY

    env = dict(zip((t.name for t in p.inputs), make_inputs(p), strict=True))
    for op in p.body:
        got = REGISTRY[op.op].apply(tuple(env[a] for a in op.args), op.params)
        env.update(zip(op.out, got if isinstance(got, tuple) else (got,), strict=False))
