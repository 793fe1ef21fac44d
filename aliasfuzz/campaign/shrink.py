"""Minimizing a finding: delta debugging over statements, re-executed in isolated workers.

A candidate is a smaller program (statements removed with everything that depends on
them, outputs dropped) that still validates and still gives the same verdict and failed
check on the same pipeline. Every candidate runs through ``evaluate`` (a
:class:`~aliasfuzz.campaign.worker.Worker`), so crashes and hangs shrink like any other
finding. Removal is tried back to front, one statement at a time (ddmin with granularity
one, repeated to a fixpoint), then outputs; the search stops after ``budget`` executions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ir import Program

__all__ = ["same_failure", "shrink", "without_statement"]

Evaluate = Callable[[Program], dict[str, Any]]


def same_failure(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether outcome ``b`` is the same failure as ``a`` (verdict and failed check)."""
    return a.get("verdict") == b.get("verdict") and a.get("check") == b.get("check")


def without_statement(program: Program, index: int) -> Program:
    """``program`` without statement ``index`` and every later statement or output using it."""
    gone = set(program.body[index].out)
    body = []
    for i, op in enumerate(program.body):
        if i == index:
            continue
        if gone & set(op.args):
            gone |= set(op.out)
            continue
        body.append(op)
    outputs = tuple(o for o in program.outputs if o not in gone)
    return program.with_body(tuple(body), outputs)


def _valid(p: Program) -> bool:
    try:
        p.validate()
    except InvalidArgument:
        return False
    return True


def shrink(
    program: Program, outcome: dict[str, Any], evaluate: Evaluate, budget: int = 60
) -> tuple[Program, dict[str, Any], int]:
    """Return ``(smallest program found, its outcome, executions spent)``."""
    best, best_out, spent = program, outcome, 0

    def attempt(candidate: Program) -> bool:
        nonlocal best, best_out, spent
        if spent >= budget or not _valid(candidate):
            return False
        spent += 1
        out = evaluate(candidate)
        if same_failure(outcome, out):
            best, best_out = candidate, out
            return True
        return False

    changed = True
    while changed and spent < budget:
        changed = False
        for i in reversed(range(len(best.body))):
            if i < len(best.body) and attempt(without_statement(best, i)):
                changed = True
        for o in reversed(best.outputs):
            outs = tuple(x for x in best.outputs if x != o)
            if attempt(best.with_body(best.body, outs)):
                changed = True
    return best, best_out, spent
