"""Shrink once per program failure: one pipeline's shrunk program stands in for the others'.

A program whose failure shows on several pipelines (a functionalization bug seen through
``aot_eager``, ``fx-reinplace``, ``inductor-reinplace`` and ``inductor``) was shrunk once per
pipeline, each with up to ``shrink_budget`` executions, and most of those shrinks end at the
same root cause: in four CPU campaigns (``bench/runs/throughput-cpu-2026-12-01.txt``) 40 %
of all shrinks were such repeats, 95 % of them filed under the root of the program's first
shrink. Here the first finding of a :func:`follow_key` is shrunk as before (the *leader*);
a later finding of the same key (a *follower*) first tries the leader's shrunk program on
its own pipeline, one execution, and is blamed on its own pipeline
(:func:`aliasfuzz.oracle.blame.blame`). The follower keeps that program only when
:func:`accepts` holds: it fails the same way there (:func:`~.shrink.same_failure`) and its
blamed stages are the leader's; otherwise it is shrunk from its own program as before,
as it is when the leader came back unshrunk (its replay did not reproduce, or nothing
could go).

The key is conservative (two different bugs must not share it, so that the second is still
shrunk on its own): the same program, verdict, check class and the same first line of the
explanation (the same wrong value at the same element, or the same exception text). Deaths
and timeouts (synthesized outcomes, :func:`~.driver.needs_confirmation`) never follow.
"""

from __future__ import annotations

from typing import Any

__all__ = ["accepts", "follow_key"]

#: Checks of outcomes synthesized from a worker's death or silence: never followed.
_SYNTHESIZED = ("signal:", "exit:", "cuda-error", "timeout")


def follow_key(i: int, outcome: dict[str, Any]) -> tuple | None:
    """The key under which program ``i``'s finding ``outcome`` may follow another pipeline's
    shrink of the same program: ``(i, verdict, check class, first explanation line)``, or
    None when it never follows (a death or a timeout, or no explanation to compare)."""
    from aliasfuzz.oracle.differential import check_class

    check = str(outcome.get("check") or "")
    if outcome.get("verdict") == "timeout" or check.startswith(_SYNTHESIZED):
        return None
    line = str(outcome.get("explanation") or "").strip().split("\n")[0]
    if not line:
        return None
    return (i, outcome.get("verdict"), check_class(outcome.get("check")), line)


def accepts(outcome: dict[str, Any], lead_outcome: dict[str, Any], lead_stages: list[str],
            blame: dict[str, Any]) -> bool:
    """Whether a follower whose own finding is ``outcome`` keeps the leader's shrunk
    program: the program run on the follower's pipeline gave ``lead_outcome``, the same
    failure, and the follower's blame (``blame``, on its own pipeline) names the same
    non-empty list of stages as the leader's (``lead_stages``). An unblamed leader or
    follower never agrees (its root is pipeline-specific: ``unblamed:<pipeline>``)."""
    from aliasfuzz.campaign.shrink import same_failure

    stages = list(blame.get("stages") or [])
    return same_failure(outcome, lead_outcome) and bool(stages) and stages == list(lead_stages)
