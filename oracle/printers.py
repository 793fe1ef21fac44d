"""Two-sided printers: eager and compiled side by side, and the witness of a claim.

Alive2 prints a counterexample with both sides; so do we: the failing check's location
with the eager and compiled values in two columns, then every claim about a candidate with
its witness (storage byte, element and index of the mutated argument, the conflicting node
and its index) and its confirmation.
"""

from __future__ import annotations

import textwrap
from typing import Any

import torch

from aliasfuzz.errors import clip

__all__ = ["side_by_side", "witness_text"]

_WIDTH = 38
#: at most this many lines of a long text value in a column
_LINES = 6


def _fmt(v: Any) -> list[str]:
    if isinstance(v, torch.Tensor):
        head = f"tensor{tuple(v.shape)} {str(v.dtype).removeprefix('torch.')}"
        if v.requires_grad:
            head += " requires_grad"
        body = str(v.detach().cpu()).replace("tensor(", "").splitlines() if v.numel() <= 64 else ["..."]
        return [head, *body]
    if isinstance(v, str) and len(v) > _WIDTH:
        # an error's text over several lines of its column, not cut at the column's edge
        # ("'_Failed: compile: InductorError: NotI": fresh user 47's B10)
        lines = textwrap.wrap(v, _WIDTH)
        if len(lines) > _LINES:
            lines = [*lines[:_LINES - 1], clip(" ".join(lines[_LINES - 1:]), _WIDTH)]
        return lines
    return [repr(v)]


def _columns(left: list[str], right: list[str]) -> list[str]:
    rows = max(len(left), len(right))
    left += [""] * (rows - len(left))
    right += [""] * (rows - len(right))
    return [f"  {a[:_WIDTH]:<{_WIDTH}} | {b[:_WIDTH]}" for a, b in zip(left, right, strict=False)]


def witness_text(claim: Any) -> str:
    """One claim (see :class:`aliasfuzz.oracle.judge.Claim`) as readable lines."""
    d, t = claim.decision, claim.truth
    state = "reinplaced" if d.reinplaced else "copied"
    lines = [f"{d.kind} {d.node} ({d.arg}): {state}; ground truth {t.status if t else '?'}"]
    if t is not None and t.witness is not None:
        w = t.witness
        lines.append(
            f"  witness (rule {w.rule}): byte {w.byte} = element {w.element} at index {list(w.index)}"
            f" of the mutated argument; {w.reader} at index {list(w.reader_index)}"
        )
        lines.append(f"  {w.message}")
    elif t is not None and t.reason:
        lines.append(f"  {t.reason}")
    if claim.confirmation is not None:
        ok = "confirmed" if claim.confirmation.confirmed else "not confirmed"
        lines.append(f"  {claim.claim.value} {ok}: {claim.confirmation.message}")
    return "\n".join(lines)


def side_by_side(judgement: Any) -> str:
    """The judgement's failing check with eager | compiled columns, then its claims."""
    j = judgement
    lines = [f"{j.pipeline}: {j.verdict.value}" + (f" ({j.check})" if j.check else "")]
    if j.explanation:
        lines.append(f"  {j.explanation}")
    failed = [c for c in j.checks if not c.passed]
    if failed:
        c = failed[0]
        lines.append(f"check {c.name} at {c.where or '-'}:")
        lines += _columns(["eager"], ["compiled"])
        lines += _columns(_fmt(c.eager), _fmt(c.compiled))
    for claim in j.claims:
        if claim.claim is not None or (claim.truth is not None and claim.truth.status == "unknown"):
            lines.append(witness_text(claim))
    return "\n".join(lines)
