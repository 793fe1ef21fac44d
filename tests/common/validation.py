"""The rule by which validation rejects a program (shared by the one-eager-meaning tests and
the op-family tests that check their rows reject through the general rule)."""

from __future__ import annotations

import pytest

from aliasfuzz.fuzz.ir import Program
from aliasfuzz.fuzz.validate import NoEagerMeaning, infer

__all__ = ["rejection_rule"]


def rejection_rule(program: Program) -> str:
    """The ``rule`` of the :class:`NoEagerMeaning` that :func:`infer` raises for ``program``;
    fails the calling test when ``program`` is accepted."""
    with pytest.raises(NoEagerMeaning) as e:
        infer(program)
    return e.value.rule
