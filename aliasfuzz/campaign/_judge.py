"""The one place the campaign calls the generator, the pipelines and the oracle.

Everything crosses this boundary as plain data: programs as :class:`Program`, outcomes as
JSON-able dicts (they travel between worker processes, into the journal and the corpus)::

    {"verdict": "miscompile", "check": "values", "explanation": "...", "diff": "...",
     "decision_kinds": ["auto_functionalized_v2"],
     "decisions": [{"kind": "...", "reinplaced": true, "truth": "safe"}], "seconds": 0.03}

Generator: :func:`aliasfuzz.fuzz.sample.generate_one`; pipelines:
:data:`aliasfuzz.passes.pipelines.PIPELINES`; oracle: :func:`aliasfuzz.oracle.judge.judge`
(which runs the pipeline itself) and :func:`aliasfuzz.oracle.cases.judge_case`. The debug
pipelines of :mod:`._debug` are served here too, without the oracle.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

from aliasfuzz.campaign import _debug
from aliasfuzz.fuzz import process
from aliasfuzz.fuzz.ir import Program

__all__ = ["blame", "evaluate", "evaluate_group", "generate", "judge_case", "pipeline_names"]

#: Claim verdicts: their signature names the kind of the deciding decision only.
_CLAIMS = ("unsafe-reinplace", "missed-reinplace")


def pipeline_names() -> set[str]:
    """Names ``--pipelines`` accepts (debug pipelines only when enabled)."""
    from aliasfuzz.passes.pipelines import PIPELINES

    names = set(PIPELINES)
    if _debug.enabled():
        names |= set(_debug.DEBUG_PIPELINES)
    return names


def generate(seed: int, index: int, max_statements: int = 8, grad_share: float | None = None) -> Program:
    """Program ``index`` of ``seed``: a pure function of its arguments and the versions.
    ``grad_share``: the share of programs whose unwritten floating inputs require grad
    (:func:`aliasfuzz.fuzz.grads.mark_grad_leaves`; None: the generator's default)."""
    from aliasfuzz.fuzz.sample import generate_one

    extra = {} if grad_share is None else {"grad_share": grad_share}
    return generate_one(seed, index, max_statements=max_statements, **extra)


def evaluate(
    program: Program, pipeline: str, device: str, options: dict[str, Any] | None = None,
    execution: Any = None, views: Sequence[Any] = (),
) -> dict[str, Any]:
    """Run ``program`` through ``pipeline`` and judge it; a JSON-able outcome (see above).

    ``execution``: the pipeline's :class:`~aliasfuzz.passes.execution.Execution`, already
    run on fresh inputs (from a shared capture), judged instead of a run of its own;
    ``views``: the views past their storage its Inductor wrapper made in that run
    (:class:`~aliasfuzz.oracle.wrapper_bounds.OutOfBounds`, where the call stopped)."""
    t0 = time.perf_counter()
    if pipeline in _debug.DEBUG_PIPELINES:
        with process.system_under_test(f"debug pipeline {pipeline}"):  # a simulated one
            out = _debug.run(program, pipeline)
    else:
        out = _judged(program, pipeline, device, options or None, execution, views)
        if out.get("verdict") in ("crash", "timeout"):
            from aliasfuzz.campaign.torn_kernels import remove_named

            # a kernel build killed mid-write in the cache is the harness's, not PyTorch's
            # (fresh user 55's B1): removed, the pipeline runs again on fresh inputs
            torn = remove_named(str(out.get("explanation") or ""))
            if torn:
                out = _judged(program, pipeline, device, options or None, None, ())
                out["torn_kernels_removed"] = [str(p) for p in torn]
    out.setdefault("check", None)
    out.setdefault("explanation", "")
    out.setdefault("diff", "")
    out.setdefault("decisions", [])
    out.setdefault("decision_kinds", [])
    out["seconds"] = time.perf_counter() - t0
    return out


def evaluate_group(
    program: Program, pipelines: list[str], device: str, options: dict[str, dict] | None = None
) -> dict[str, dict[str, Any]]:
    """:func:`evaluate` of ``program`` under each of ``pipelines``, those that
    :func:`aliasfuzz.passes.shared.plan` picks run from one Dynamo capture
    (:func:`~aliasfuzz.passes.shared.run_shared`), the others (and any it leaves out) on
    their own. ``options``: pipeline -> its options dict. Pipeline -> outcome."""
    from aliasfuzz.passes.pipelines import PipelineOptions
    from aliasfuzz.passes.shared import plan, run_shared

    options = options or {}
    built = {p: PipelineOptions(**(options.get(p) or {})) for p in pipelines
             if p not in _debug.DEBUG_PIPELINES}
    from aliasfuzz.oracle.wrapper_bounds import checked_views

    picked = plan(program, [p for p in pipelines if p in built], device, built)
    shared: dict[str, Any] = {}
    views: list[Any] = []
    if picked:
        # the wrappers' views are checked here as _judged checks a run of its own: the
        # shared capture compiles and runs Inductor before any pipeline is judged
        with process.system_under_test(f"pipelines {','.join(picked)} (one capture)"), \
                checked_views(stop=True) as views:
            shared = run_shared(program, picked, device, built[picked[0]])
    return {p: evaluate(program, p, device, options.get(p), shared.get(p),
                        _stopped_at(shared.get(p), views))
            for p in pipelines}


def _stopped_at(execution: Any, views: Sequence[Any]) -> list[Any]:
    """The views of ``views`` (:class:`~aliasfuzz.oracle.wrapper_bounds.OutOfBounds`) at
    which ``execution``'s call stopped: those its failure names, or all of them when it
    failed with :class:`~aliasfuzz.oracle.wrapper_bounds.OutOfBoundsView` naming none;
    none for an execution that did not stop at one."""
    failure = getattr(execution, "failure", None)
    if not views or failure is None or not any(
            k.endswith(".OutOfBoundsView") for k in failure.kinds):
        return []
    named = [v for v in views if v.message() in failure.message]
    return named or list(views)


def _judged(
    program: Program, pipeline: str, device: str, options: dict | None, execution: Any = None,
    stopped: Sequence[Any] = (),
) -> dict[str, Any]:
    from aliasfuzz.oracle.heap import WRAPPER_PIPELINES
    from aliasfuzz.oracle.judge import judge
    from aliasfuzz.oracle.wrapper_bounds import checked_views

    # every view Inductor's wrapper makes is checked against its storage, and one past it
    # stops the compiled call there (oracle.wrapper_bounds), before a kernel writes out of
    # bounds: a value difference, a crash or a dead worker later is that view's doing
    guard = checked_views(stop=True) if pipeline in WRAPPER_PIPELINES else nullcontext([])
    with guard as views:
        j = judge(program, pipeline if execution is None else execution, options, device)
    views = [*stopped, *views]  # a shared capture's run stopped before this guard
    if views and (j.verdict.is_finding or j.verdict.value == "ok"):
        return _out_of_bounds(pipeline, views, j)
    decisions = [
        {
            "kind": c.decision.kind,
            "reinplaced": bool(c.decision.reinplaced),
            "truth": c.truth.status if c.truth is not None else "unknown",
            "rule": c.truth.witness.rule if c.truth is not None and c.truth.witness else None,
            "claim": c.claim.value if c.claim is not None else None,
        }
        for c in j.claims
    ]
    verdict = j.verdict.value
    if verdict in _CLAIMS:
        kinds = {d["kind"] for d in decisions if d["claim"] == verdict}
    else:
        kinds = {d["kind"] for d in decisions}
    diff = j.diff if j.verdict.is_finding else ""
    failure = getattr(j.execution, "failure", None)
    return {
        "verdict": verdict,
        "check": j.check,
        "explanation": j.explanation,
        # the clock stage the compiled call failed at (passes.execution.STAGES), read by
        # known.control_removes: a field, not the explanation's wording
        "failed_at": failure.stage if failure is not None else None,
        "diff": diff,
        "decisions": decisions,
        "decision_kinds": sorted(kinds),
        "filtered": list(j.filtered),
        # full inductor runs: compiled / needed bytes per call (issue 14, oracle/needed.py)
        "cost": j.cost,
        # second eager opinions run for this task (findings only): oracle/opinions.py
        "opinions": [o.to_json() for o in j.opinions],
        # the rule of an equivalent spelling that made this a cost finding (oracle/witness.py)
        "witness_rule": j.witness.rule if j.check == "witness" and j.witness is not None else None,
    }


def _out_of_bounds(pipeline: str, views: list, j: Any) -> dict[str, Any]:
    """The outcome of a run whose Inductor wrapper made views past their storage
    (``views``, :class:`~aliasfuzz.oracle.wrapper_bounds.OutOfBounds`):
    :func:`aliasfuzz.oracle.heap.out_of_bounds` whatever the judge saw after the compiled
    call stopped there (what it saw ends the explanation)."""
    from aliasfuzz.oracle.heap import out_of_bounds

    said = list(dict.fromkeys(v.message() for v in views))
    seen = (j.explanation or "").split("\n")[0][:200]
    return {
        **out_of_bounds(pipeline, said, (
            f"checked as the wrapper made it; the call stopped there). The judge then saw: "
            f"{j.verdict.value}/{j.check}: {seen}")),
        "decisions": [],
        "decision_kinds": [],
        "filtered": list(j.filtered),
        "opinions": [],
    }


def judge_case(path: str, pipelines: list[str] | None = None) -> list[dict[str, Any]]:
    """Judge a /work/shared/cases-format file; one row per pipeline.

    Row: ``{"pipeline", "verdict", "expected", "explanation"}``; ``expected`` is None for a
    pipeline without an ``expect`` line, ``verdict`` is ``skipped`` for a GPU case without
    a GPU. Raises :class:`InvalidArgument` for a file that is not in the case format.
    """
    from aliasfuzz.oracle.cases import judge_case as _judge_case

    return list(_judge_case(path, pipelines))


def blame(
    program: Program, pipeline: str, device: str, options: dict[str, Any] | None,
    outcome: dict[str, Any], *, full: bool = True, isolate: bool = False,
) -> dict[str, Any]:
    """Blame a finding on a stage of its pipeline (:mod:`aliasfuzz.oracle.blame`), JSON-able.

    ``{"stage", "stages", "trail", "reason", "full", "seconds"}``: ``full`` says, for a
    finding of the fast path ``inductor-reinplace``, whether full ``torch.compile``
    (``inductor``) reproduces it (``reproduces``), does not (``hidden``), or cannot run
    the program here (``unsupported``: e.g. user Triton kernels on a CPU); None for the
    other pipelines. Debug pipelines are not cut (stage None). ``full=False`` leaves
    ``full`` None: the campaign judges full ``torch.compile`` as a task of its own
    (:func:`aliasfuzz.campaign.pool.blame_in`), so that a compile that kills the worker
    does not take the cut's result with it (fourth audit 8be8a9c905). ``isolate``: every
    stage and control in a child interpreter (:func:`aliasfuzz.oracle.blame.blame_program`).
    """
    from aliasfuzz.oracle.blame import Blame, blame_program

    t0 = time.perf_counter()
    if pipeline in _debug.DEBUG_PIPELINES:
        b = Blame(None, reason=f"{pipeline} is a debug pipeline")
    else:
        crash = outcome["verdict"] in ("crash", "timeout")
        if pipeline == "torchscript":
            options = executor_options(options, outcome.get("explanation") or "")
        b = blame_program(program, pipeline, outcome["verdict"], outcome.get("check"),
                          device, options or None,
                          error=outcome.get("explanation") if crash else None,
                          isolate=isolate, said=outcome.get("explanation"))
    out = b.to_json()
    out["full"] = None
    if pipeline == "inductor-reinplace" and full:
        out.update(full_of(outcome, _judged(program, "inductor", device, options or None)))
    out["seconds"] = time.perf_counter() - t0
    return out


def executor_options(options: Any, explanation: str) -> Any:
    """``options`` of a ``torchscript`` finding with the executor that showed it selected,
    so that the stage cuts (:func:`aliasfuzz.passes.stages.cut`: frontend, optimizer, fuser)
    run that executor. The judge's explanation starts with the executor's name
    (``legacy call 0 (optimized) raised ...``, :func:`aliasfuzz.oracle.ts_invariants.judge`);
    a finding of the legacy executor cut under the profiling one agrees at every stage and
    was left unblamed (crash-unblamed-torchscript-d672f7a8d3: ``index_copy`` with ``out=``
    and an input that requires grad, legacy only). ``options``: a dict of pipeline options,
    a :class:`~aliasfuzz.passes.pipelines.PipelineOptions`, or None; returned unchanged
    unless the executor is ``legacy``."""
    from dataclasses import replace

    from aliasfuzz.passes.pipelines import PipelineOptions

    if explanation.split(" ", 1)[0] != "legacy":
        return options
    if isinstance(options, PipelineOptions):
        return replace(options, torchscript={**options.torchscript, "profiling_executor": False})
    d = dict(options or {})
    d["torchscript"] = {**(d.get("torchscript") or {}), "profiling_executor": False}
    return d


def full_of(outcome: dict[str, Any], full: dict[str, Any]) -> dict[str, Any]:
    """``{"full", "full_outcome"}`` of a fast-path finding ``outcome`` given ``full``, the
    outcome of the same program on full ``inductor`` (see :func:`blame`)."""
    if full["verdict"] in ("invalid-program", "unsupported"):
        verdict = "unsupported"
    elif full["verdict"] == outcome["verdict"]:
        verdict = "reproduces"
    else:
        verdict = "hidden"
    return {"full": verdict,
            "full_outcome": {k: full.get(k, "") for k in ("verdict", "check", "explanation")}}
