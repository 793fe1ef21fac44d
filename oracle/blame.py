"""Blame: the stage of a pipeline that broke the program, found by cutting the pipeline.

A finding says *that* a pipeline's result departs from eager; an upstream engineer needs
to know *where*. :func:`blame` takes the program's result after every stage of the
pipeline (:func:`aliasfuzz.passes.stages.cut`: Dynamo's capture, the decompositions,
functionalization, each named Inductor pass, the reinplace pass, lowering and scheduling)
and compares each with eager under the oracle's own differential check
(:func:`aliasfuzz.oracle.differential.differential`, tolerances and fp64 shadow included):

* the **blamed stage** is the first stage of the final run of departing stages: every
  stage from it to the end departs from eager, the one before it agrees (a stage whose
  departure a later stage undoes is not the cause of what the pipeline returns);
* a later stage is blamed **too** when it introduces a departure of its own: an element
  (of an output or an input after the call) that the stage before it got right, or an
  output whose aliasing the stage before it got right (PyTorch bugs do stack: a kernel
  launched with one tensor twice loses a write in functionalization, and the reinplace
  pass then erases the copy-back of the other argument, ``shared/audit`` 015634b84c).

Findings that are claims about a decision of the reinplace pass (``unsafe-reinplace``,
``missed-reinplace`` from the candidates check) are the pass's by construction: their
stage is ``reinplace`` without cutting. Mapping to the audit's stage labels
(``shared/audit/labels.tsv``) is :data:`AUDIT_STAGES`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from aliasfuzz.fuzz.eager import EagerResult
from aliasfuzz.oracle.differential import differential, tolerance

__all__ = ["AUDIT_STAGES", "NOT_REPRODUCED", "Blame", "adds_departure", "blame"]

#: The audit's stage label -> the stages of this vocabulary it names (see
#: :mod:`aliasfuzz.passes.stages`): the audit names the stage by the component that
#: holds the defect, we by the prefix of the pipeline whose result first departs.
AUDIT_STAGES: dict[str, tuple[str, ...]] = {
    "aot-decomposition": ("decomposition",),
    "functionalization": ("functionalization",),
    "functionalization+reinplace": ("functionalization", "reinplace"),
    "reinplace": ("reinplace",),
    "reinplace-heuristics": ("reinplace",),  # a declined candidate: the pass's decision
    "scheduler": ("scheduler",),
    # Dynamo rewrites addcmul_ into ops that are exact in eager; the value departs where
    # Inductor lowers them to a float fma, with or without fusion
    "dynamo+lowering": ("lowering",),
    "remove_noop_ops": ("joint:remove_noop_ops", "post-grad:remove_noop_ops"),
}

#: Verdicts decided by the reinplace pass's own decisions (no cut needed).
_CLAIMS = ("unsafe-reinplace", "missed-reinplace")


@dataclass
class Blame:
    """Where a finding's pipeline broke.

    ``stage``: the blamed stage (None when no cut reproduces the finding: ``reason`` says
    why); ``stages``: every blamed stage, ``stage`` first; ``trail``: one
    ``(stage, what happened)`` pair per stage run, in pipeline order, for the report.
    """

    stage: str | None
    stages: tuple[str, ...] = ()
    trail: list[tuple[str, str]] = field(default_factory=list)
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"stage": self.stage, "stages": list(self.stages),
                "trail": [list(t) for t in self.trail], "reason": self.reason}


def _mismatch(e: Any, c: Any) -> torch.Tensor | bool:
    """Element mask of where ``c`` departs from ``e`` (True: the whole value departs)."""
    if not (isinstance(e, torch.Tensor) and isinstance(c, torch.Tensor)):
        return bool(e != c) if not isinstance(e, torch.Tensor) and not isinstance(c, torch.Tensor) else True
    if e.shape != c.shape or e.dtype != c.dtype:
        return True
    e_, c_ = e.detach().cpu(), c.detach().cpu()
    if e_.is_floating_point() or e_.is_complex():
        rtol, atol = tolerance(e_.dtype)
        return ~torch.isclose(c_, e_, rtol=rtol, atol=atol, equal_nan=True)
    return c_ != e_


def _new_departure(prev: Any, cur: Any) -> bool:
    """Whether mask ``cur`` marks an element that mask ``prev`` does not (a mask is a
    bool tensor, or a bool for a value that departs as a whole or not at all)."""
    def every(m: Any) -> bool:
        return bool(m) if isinstance(m, bool) else bool(m.all())

    def some(m: Any) -> bool:
        return bool(m) if isinstance(m, bool) else bool(m.any())

    if not some(cur) or every(prev):
        return False
    if isinstance(cur, bool) or isinstance(prev, bool) or prev.shape != cur.shape:
        return True
    return bool((cur & ~prev).any())


def _masks(eager: EagerResult, res: EagerResult) -> list[Any]:
    vals = list(zip(eager.outputs, res.outputs, strict=False))
    vals += list(zip(eager.inputs_after, res.inputs_after, strict=False))
    masks: list[Any] = [_mismatch(e, c) for e, c in vals]
    if len(eager.outputs) != len(res.outputs):
        masks.append(True)
    masks += [eager.aliases.get(k) != res.aliases.get(k) for k in sorted(eager.aliases)]
    return masks


def adds_departure(eager: EagerResult, before: EagerResult, after: EagerResult) -> bool:
    """Whether ``after`` departs from ``eager`` somewhere ``before`` does not (an element of
    an output or of an input after the call, or an output's aliasing): the rule that blames
    a later stage of a stacked bug, used by the unsafe-reinplace confirmation too."""
    prev, cur = _masks(eager, before), _masks(eager, after)
    if len(prev) != len(cur):
        return True
    return any(_new_departure(p, c) for p, c in zip(prev, cur, strict=True))


def departure(
    pipeline: str, eager: EagerResult, res: EagerResult, names: Sequence[str],
    shadow: Callable[[], EagerResult | None] | None = None,
) -> str | None:
    """Why stage result ``res`` departs from ``eager`` (None: it agrees), by the checks a
    finding of ``pipeline`` would fail (waived checks are waived here too)."""
    from aliasfuzz.oracle.judge import WAIVED

    if res.error is not None and eager.error is None:
        return f"raises {type(res.error).__name__}: {str(res.error).splitlines()[0][:200] if str(res.error) else ''}"
    waived = WAIVED.get(pipeline, {})
    for c in differential(eager, res, names, shadow=shadow):
        if not c.passed and c.name not in waived:
            return f"{c.name}: {c.message}"
    return None


#: The reason of a blame that found no departing stage (the finding did not reproduce
#: stage by stage); the campaign does not write a signal death with this reason.
NOT_REPRODUCED = ("no cut of the pipeline departs from eager "
                  "(the finding did not reproduce stage by stage)")


def _chain(e: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    cur: BaseException | None = e
    while cur is not None and all(cur is not x for x in out):
        out.append(cur)
        cur = cur.__cause__ or (None if cur.__suppress_context__ else cur.__context__)
    return out


def _same_error(e: BaseException, finding: str) -> bool:
    """Whether a stage's exception ``e`` can be the crash a finding's explanation
    (``finding``) reports: an exception of its chain (``__cause__``/``__context__``) whose
    type is named there and whose message starts as a message there does (types alone
    are too coarse: our decomposition cut's ``AssertionError: sources must not be empty``
    is not AOTAutograd's ``AssertionError: incorrect out shape``). A wrapper such as
    ``BackendCompilerFailed`` carries the error it wraps in its chain."""
    for x in _chain(e):
        name = type(x).__name__
        if not re.search(rf"\b{re.escape(name)}\b", finding):
            continue
        head = str(x).strip().splitlines()[0][:20] if str(x).strip() else ""
        if not head or head in finding:
            return True
    return False


def blame(
    pipeline: str,
    verdict: str,
    check: str | None,
    eager: EagerResult,
    runs: Sequence[Any],
    names: Sequence[str],
    shadow: Callable[[], EagerResult | None] | None = None,
    error: str | None = None,
) -> Blame:
    """Blame a finding (``verdict``/``check`` on ``pipeline``) on the stages of ``runs``.

    ``error`` is a crash finding's explanation (what the pipeline raised): a stage that
    raises an exception whose type (or innermost cause's type) it does not name says
    nothing about this crash (our cut can fail on its own where the pipeline does not)
    and is inconclusive.

    ``runs`` are :class:`aliasfuzz.passes.stages.StageRun` in pipeline order, ``eager``
    the reference on fresh inputs, ``names`` the input names, ``shadow`` the fp64 run
    (see :func:`aliasfuzz.oracle.differential.differential`). TorchScript stages carry
    their own verdict (``run.extra["verdict"]``). See the module docstring for the rule.
    """
    if verdict in _CLAIMS and check == "candidates":
        return Blame("reinplace", ("reinplace",), [("reinplace", f"decision: {verdict}")])
    trail: list[tuple[str, str]] = []
    kept: list[tuple[Any, list[Any]]] = []  # conclusive stages: (run, departure masks or None)
    crash = verdict in ("crash", "timeout")
    for r in runs:
        if "verdict" in r.extra:  # torchscript: the stage judged itself call by call
            # only this finding's verdict is a departure: a stage that breaks a graph
            # invariant does not show a miscompile that appears at a later stage
            v = r.extra["verdict"]
            why = None if v != verdict else f"{v}: {r.extra.get('explanation', '')[:200]}"
            inconclusive = v in ("invalid-program", "unknown", "unsupported")
            if why is None and v not in ("ok", verdict) and not inconclusive:
                trail.append((r.stage, f"agrees for this finding (it is {v} there)"))
                kept.append((r, None))
                continue
        else:
            why = departure(pipeline, eager, r.result, names, shadow)
            # a stage that raises on a value finding says nothing about the values (our
            # cut may trace what the pipeline itself never traces that way)
            inconclusive = r.result.error is not None and not crash
            if crash and error and r.result.error is not None and not _same_error(
                r.result.error, error
            ):
                inconclusive, why = True, f"{why}; not the finding's error"
        if inconclusive:
            trail.append((r.stage, f"inconclusive ({why})"))
            continue
        trail.append((r.stage, "agrees" if why is None else f"departs ({why})"))
        mask = None
        if why is not None:
            mask = _masks(eager, r.result) if r.result.error is None else [True]
        kept.append((r, mask))
    if not kept or kept[-1][1] is None:
        return Blame(None, (), trail, NOT_REPRODUCED)
    first = len(kept) - 1
    while first > 0 and kept[first - 1][1] is not None:
        first -= 1
    stages = [kept[first][0].stage]
    for k in range(first + 1, len(kept)):
        prev, cur = kept[k - 1][1], kept[k][1]
        if len(cur) == len(prev) and any(
            _new_departure(p, c) for p, c in zip(prev, cur, strict=True)
        ):
            stages.append(kept[k][0].stage)
    return Blame(stages[0], tuple(stages), trail)


def blame_program(
    program: Any, pipeline: str, verdict: str, check: str | None,
    device: str = "cpu", options: Any = None, error: str | None = None,
) -> Blame:
    """:func:`blame` for an IR program: eager on fresh inputs, then every cut of
    ``pipeline`` (:func:`aliasfuzz.passes.stages.cut`) on fresh inputs each.
    Raises :class:`~aliasfuzz.errors.InvalidArgument` for a pipeline without stages."""
    from aliasfuzz.fuzz.eager import make_inputs
    from aliasfuzz.fuzz.render import load_function
    from aliasfuzz.oracle.confirm import run_callable_named
    from aliasfuzz.oracle.judge import _options, _shadow
    from aliasfuzz.passes.stages import cut

    if verdict in _CLAIMS and check == "candidates":
        return blame(pipeline, verdict, check, EagerResult(), [], [])
    fn, _ = load_function(program)
    names = [t.name for t in program.inputs]

    def make() -> tuple:
        return make_inputs(program, device)

    eager = run_callable_named(fn, names, make())
    runs = cut(pipeline, fn, make, names, options=_options(options), program=program, device=device)
    return blame(pipeline, verdict, check, eager, runs, names, shadow=_shadow(fn, names, make),
                 error=error)
