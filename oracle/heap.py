"""Heap corruption by the system under test, shown in processes that run nothing else.

glibc notices an out-of-bounds write only at a later ``malloc`` or ``free`` of a corrupted
chunk, often in harness code after the run that wrote (a campaign worker died in
``eager.py`` building the next task's inputs, or in the oracle). Such a death was an
internal error of aliasfuzz (``worker.attribute_death``), never a finding: nothing showed
which run wrote (twelfth campaign: four such deaths, programs 1428 and 1824 of seed
20261206). Every such death (:func:`may_be_corruption`) is asked about. :func:`confirm`
shows it: the program runs on fresh inputs under the pipeline
alone, in a child interpreter that then makes glibc check its heap
(:func:`aliasfuzz.fuzz.isolated.heap_check`), up to :data:`TRIES` times; and eager alone the
same way as the control, :data:`EAGER_TRIES` times. A pipeline whose children die
of it (:attr:`aliasfuzz.fuzz.isolated.Died.heap`: glibc's message before the abort, or a
segfault) at least :data:`DEATHS` times while eager's never do corrupts the heap:
a ``crash`` with the signal as its check, and ``heap`` (deaths / runs) in the outcome. Anything
else (no death, or eager dying too) shows nothing and the internal error stands.

An Inductor pipeline is asked first, deterministically, whether its generated wrapper makes
a view past its base's storage (:func:`wrapper_out_of_bounds`,
:mod:`aliasfuzz.oracle.wrapper_bounds`): one child interpreter compiles and runs the
program with every ``reinterpret_tensor`` of the wrapper checked against the storage it
views, and such a view is the finding (``heap`` ``"static"``, the views in
``out_of_bounds``), glibc's children not needed.

Such a finding is shrunk with each candidate asked the same way, never in a worker
(:meth:`aliasfuzz.campaign.pool.Pool._heap_step`, at most
:data:`~aliasfuzz.campaign.pool.HEAP_SHRINK_BUDGET` candidates): a run in a worker may die in
aliasfuzz, die in PyTorch or survive with wrong values, so it cannot tell a candidate that
keeps the bug from one that lost it; the confirmation with its eager control is the
finding's replay. It is cut like any signal death (its compiled stages in child
interpreters that check the heap, :class:`aliasfuzz.oracle.blame._Isolation`).
"""

from __future__ import annotations

import time
from typing import Any

from aliasfuzz.fuzz.isolated import HEAP_SIGNALS

__all__ = [
    "CORRUPTION_CHECKS", "DEATHS", "DIED_OF", "EAGER_TRIES", "HEAP_MESSAGE", "OUT_OF_BOUNDS",
    "TRIES", "WRAPPER_PIPELINES", "confirm", "may_be_corruption", "out_of_bounds", "run_alone",
    "run_captured", "wrapper_out_of_bounds",
]

#: Runs of the pipeline at most (it stops at its :data:`DEATHS`-th death), and of eager,
#: each in its own child interpreter: glibc does not notice every corruption (c12's program
#: 1428 killed 3, 2 and 1 of 3 children in three confirmations, 6 of 8 in a later run on
#: this machine).
TRIES = 6
EAGER_TRIES = 3
#: Deaths that show corruption (:attr:`aliasfuzz.fuzz.isolated.Died.heap`) a finding needs:
#: two, so that one stray signal to one child cannot make a finding.
DEATHS = 2

#: The check of a finding shown by a view past its storage in Inductor's wrapper (verdict
#: ``crash``: the checked call stops there, before any kernel writes through it):
#: :func:`confirm`, and a worker's run that makes one (:func:`aliasfuzz.campaign._judge.evaluate`).
OUT_OF_BOUNDS = "out-of-bounds"

#: The pipelines whose compile generates an Inductor wrapper (the fast path stops before
#: code generation).
WRAPPER_PIPELINES = ("inductor", "inductor-noreinplace")

#: What ``worker.attribute_death`` writes in the summary (or a crash's explanation) of a
#: worker's death after glibc found the heap corrupted.
HEAP_MESSAGE = "glibc found the heap corrupted"


#: The worker-death checks a corrupted heap kills with (:data:`HEAP_SIGNALS
#: <aliasfuzz.fuzz.isolated.HEAP_SIGNALS>`). A SIGKILL (the OOM killer, a timeout) or
#: SIGTERM is never asked about.
CORRUPTION_CHECKS = tuple(f"signal:{s}" for s in HEAP_SIGNALS)

#: What a confirmed finding's explanation says before the worker's death that raised the
#: question (its summary, what :func:`confirm` takes as ``first``)
DIED_OF = "The worker had died of it: "


def may_be_corruption(outcome: dict[str, Any]) -> bool:
    """Whether a task's ``outcome`` is a worker's death that heap corruption may explain:
    an internal error by a signal (the worker died in aliasfuzz: glibc named a corrupted
    heap, or a corrupted pointer faulted first, SIGSEGV, as on torch 2.11 on the H200
    host), or a ``crash`` whose log names glibc's heap message (it died in the system
    under test, often in the eager run after the pipeline's: glibc notices at a later
    ``malloc``, so where the worker died says little about which run wrote). Such a death
    is asked about (:func:`confirm`); one already confirmed is not."""
    if "internal_error" in outcome:
        return str(outcome.get("check") or "") in CORRUPTION_CHECKS or (
            HEAP_MESSAGE in str(outcome.get("summary") or ""))
    return outcome.get("verdict") == "crash" and not outcome.get("heap") and (
        HEAP_MESSAGE in str(outcome.get("explanation") or ""))


def run_alone(program: dict, pipeline: str, device: str, options: dict | None) -> None:
    """A child interpreter's step: ``program`` (its JSON) on fresh inputs under
    ``pipeline`` (``eager``: the program called as is), nothing judged. Returns nothing:
    what counts is whether the child survives the heap check the caller asks for after
    the step (a corrupted heap kills it)."""
    from aliasfuzz.fuzz.eager import make_inputs, run_eager
    from aliasfuzz.fuzz.ir import Program
    from aliasfuzz.passes.pipelines import PipelineOptions, run_pipeline

    p = Program.from_json(program)
    if pipeline == "eager":
        run_eager(p, device=device)
    else:
        run_pipeline(pipeline, p, make_inputs(p, device), device,
                     PipelineOptions(**(options or {})))


def out_of_bounds(pipeline: str, views: list[str], then: str) -> dict[str, Any]:
    """The outcome of ``pipeline`` whose Inductor wrapper made ``views`` (one sentence each,
    :meth:`aliasfuzz.oracle.wrapper_bounds.OutOfBounds.message`): a ``crash`` of check
    :data:`OUT_OF_BOUNDS`, the views in the explanation and in ``out_of_bounds``; ``then``
    ends the explanation (how they were seen). One verdict for one bug, whether a worker
    stopped at the view (:func:`aliasfuzz.campaign._judge.evaluate`) or died of its write
    (:func:`confirm`)."""
    return {
        "verdict": "crash",
        "check": OUT_OF_BOUNDS,
        "explanation": f"{pipeline} writes out of bounds: {'; '.join(views)} ({then}",
        "diff": "",
        "out_of_bounds": views,
    }


def run_captured(program: dict, pipeline: str, device: str, options: dict | None,
                 path: str) -> None:
    """A child interpreter's step: :func:`run_alone` with every view Inductor's wrapper
    makes past its base's storage appended to ``path`` as it is made, before a kernel uses
    it (:func:`aliasfuzz.oracle.wrapper_bounds.checked_views`), so that the file is there
    even when that kernel kills the child."""
    from aliasfuzz.oracle.wrapper_bounds import checked_views

    with checked_views(path):
        run_alone(program, pipeline, device, options)


def wrapper_out_of_bounds(program: Any, pipeline: str, device: str,
                          options: dict | None) -> list[str]:
    """The views past their base's storage that the wrapper Inductor generated for
    ``program`` under ``pipeline`` made (:mod:`aliasfuzz.oracle.wrapper_bounds`, one
    sentence each, each view once), from one child interpreter (:func:`run_captured`)
    whatever its fate; ``[]`` for a pipeline that generates no wrapper
    (:data:`WRAPPER_PIPELINES`) or when it made none."""
    import tempfile

    from aliasfuzz.fuzz.isolated import run_isolated
    from aliasfuzz.oracle.wrapper_bounds import read_found

    if pipeline not in WRAPPER_PIPELINES:
        return []
    with tempfile.TemporaryDirectory(prefix="aliasfuzz-wrapper-") as tmp:
        path = f"{tmp}/views"
        run_isolated(f"{__name__}:run_captured",
                     (program.to_json(), pipeline, device, options, path))
        found = read_found(path)
    return list(dict.fromkeys(o.message() for o in found))


class _OutOfTime(Exception):
    """:func:`confirm`'s time (``seconds``) ran out before its children answered."""


def confirm(program: Any, pipeline: str, device: str, options: dict | None,
            first: dict[str, Any], *, static_only: bool = False,
            seconds: float | None = None) -> dict[str, Any] | None:
    """The ``crash`` outcome of ``program`` under ``pipeline`` when the pipeline alone
    corrupts the heap and eager alone does not (module docstring), else None. ``first``:
    the internal error that raised the question (its summary goes into the explanation).
    ``options``: the pipeline's options as a dict.

    Asked first: an Inductor pipeline whose generated wrapper makes a view past its base's
    storage (:func:`wrapper_out_of_bounds`) is shown so at once, deterministically: a
    ``crash`` of check :data:`OUT_OF_BOUNDS` with ``heap`` ``"static"`` (no eager control:
    eager makes no such view; the name says it does not depend on glibc noticing); glibc's
    children are asked only when that shows nothing. ``static_only``: not even then (a
    shrink candidate of a finding shown statically must show the same evidence).
    ``seconds``: glibc's children start only within this many seconds of the call, each
    given what is left; one that runs out shows nothing (a campaign's ``--timeout``: fresh
    user 39's B7 saw 136 s of children for one death with a 120 s timeout)."""
    from aliasfuzz.fuzz.isolated import Died, run_isolated

    end = None if seconds is None else time.monotonic() + seconds

    views = wrapper_out_of_bounds(program, pipeline, device, options)
    if views:
        return {**out_of_bounds(pipeline, views, (
            f"checked as the wrapper made it, in a process that ran only the program). "
            f"{DIED_OF}{first.get('summary') or first.get('explanation') or ''}")),
            "heap": "static"}
    if static_only:
        return None

    def deaths(p: str, tries: int, enough: int, counts: Any) -> tuple[list[Died], int]:
        died, runs = [], 0
        while runs < tries and len(died) < enough:
            left = 600.0 if end is None else end - time.monotonic()
            if left <= 0:
                raise _OutOfTime
            runs += 1
            got = run_isolated(f"{__name__}:run_alone", (program.to_json(), p, device, options),
                               check_heap=True, timeout=min(600.0, left))
            if isinstance(got, Died) and not got.heap and end is not None \
                    and time.monotonic() >= end:
                raise _OutOfTime  # killed for the time: not an answer either way
            if isinstance(got, Died) and counts(got):
                died.append(got)
        return died, runs

    # the pipeline's deaths count only when they show corruption (a signal sent from
    # outside, a user's kill -ABRT or the OOM killer's SIGKILL, kills without glibc's
    # message); any death of eager's, whatever killed it, withholds the finding
    try:
        died, runs = deaths(pipeline, TRIES, DEATHS, lambda d: d.heap)
        if len(died) < DEATHS or deaths("eager", EAGER_TRIES, 1, lambda d: True)[0]:
            return None
    except _OutOfTime:  # not shown in time: the internal error stands, as when not shown
        return None
    signal = died[0].signal
    shown = "; ".join(sorted({f"{d.how}: {d.heap}" if d.heap != d.signal else d.how
                              for d in died}))
    return {
        "verdict": "crash",
        "check": f"signal:{signal}",
        "explanation": (
            f"{pipeline} corrupts the heap (an out-of-bounds write): a process that ran "
            f"only the program under {pipeline} on fresh inputs, then had glibc check its "
            f"heap, died ({shown}) in {len(died)} of {runs} runs; eager alone did "
            f"not in {EAGER_TRIES}. {DIED_OF}"
            f"{first.get('summary') or first.get('explanation') or ''}"
        ),
        "diff": "",
        # the confirmation is this finding's replay: another run in a worker may die in
        # aliasfuzz or survive with wrong values (campaign.pool does not shrink it)
        "heap": f"{len(died)}/{runs}",
    }
