"""Heap corruption by the system under test, shown in processes that run nothing else.

glibc notices an out-of-bounds write only at a later ``malloc`` or ``free`` of a corrupted
chunk, often in harness code after the run that wrote (a campaign worker died in
``eager.py`` building the next task's inputs, or in the oracle). Such a death was an
internal error of aliasfuzz (``worker.attribute_death``), never a finding: nothing showed
which run wrote (twelfth campaign: four such deaths, programs 1428 and 1824 of seed
20261206). :func:`confirm` shows it: the program runs on fresh inputs under the pipeline
alone, in a child interpreter that then makes glibc check its heap
(:func:`aliasfuzz.fuzz.isolated.heap_check`), :data:`TRIES` times; and eager alone the same
way as the control. A pipeline whose child dies while eager's never does corrupts the heap:
a ``crash`` with the signal as its check, and ``heap`` (deaths / runs) in the outcome. Anything
else (no death, or eager dying too) shows nothing and the internal error stands.

Such a finding is not shrunk (:meth:`aliasfuzz.campaign.pool.Pool._shrink`): a run in a
worker may die in aliasfuzz, die in PyTorch or survive with wrong values, so the shrinker's
replay cannot tell a candidate that keeps the bug from one that lost it; the confirmation
with its eager control is the finding's replay. It is cut like any signal death (its
compiled stages in child interpreters that check the heap, :class:`aliasfuzz.oracle.blame._Isolation`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["TRIES", "confirm", "is_heap_death", "run_alone"]

#: Runs of the pipeline, and of eager, each in its own child interpreter.
TRIES = 3

#: What ``worker.attribute_death`` writes in the summary (or a crash's explanation) of a
#: worker's death after glibc found the heap corrupted.
_SUMMARY = "glibc found the heap corrupted"


def is_heap_death(outcome: dict[str, Any]) -> bool:
    """Whether a task's ``outcome`` is a worker's death after glibc found the heap
    corrupted: an internal error (it died in aliasfuzz) or a ``crash`` (it died in the
    system under test, often in the eager reference run after the pipeline's: glibc
    notices at a later ``malloc``, so where the worker died says little about which run
    wrote)."""
    if "internal_error" in outcome:
        return _SUMMARY in str(outcome.get("summary") or "")
    return outcome.get("verdict") == "crash" and not outcome.get("heap") and (
        _SUMMARY in str(outcome.get("explanation") or ""))


def run_alone(program: dict, pipeline: str, device: str, options: dict | None) -> str:
    """A child interpreter's step: ``program`` (its JSON) on fresh inputs under
    ``pipeline`` (``eager``: the program called as is), nothing judged. Returns
    ``raised`` or ``ran``; a corrupted heap kills the child (the caller asks for a heap
    check after the step)."""
    from aliasfuzz.fuzz.eager import make_inputs
    from aliasfuzz.fuzz.ir import Program
    from aliasfuzz.fuzz.render import load_function
    from aliasfuzz.passes.pipelines import NON_DYNAMO_TRACING, PipelineOptions, run_function

    p = Program.from_json(program)
    fn, _ = load_function(p, capture_triton=pipeline in NON_DYNAMO_TRACING)
    names = [t.name for t in p.inputs]
    inputs = make_inputs(p, device)
    if pipeline == "eager":
        try:
            fn(*inputs)
        except Exception:
            return "raised"
        return "ran"
    ex = run_function(pipeline, fn, inputs, input_names=names, device=device,
                      options=PipelineOptions(**(options or {})))
    return "raised" if getattr(ex, "error", None) is not None else "ran"


def confirm(program: Any, pipeline: str, device: str, options: dict | None,
            first: dict[str, Any]) -> dict[str, Any] | None:
    """The ``crash`` outcome of ``program`` under ``pipeline`` when the pipeline alone
    corrupts the heap and eager alone does not (module docstring), else None. ``first``:
    the internal error that raised the question (its summary goes into the explanation).
    ``options``: the pipeline's options as a dict."""
    from aliasfuzz.fuzz.isolated import Died, run_isolated

    def deaths(p: str) -> list[Died]:
        got = [run_isolated(f"{__name__}:run_alone", (program.to_json(), p, device, options),
                            check_heap=True) for _ in range(TRIES)]
        return [g for g in got if isinstance(g, Died) and g.how.startswith("signal")]

    died = deaths(pipeline)
    if not died or deaths("eager"):
        return None
    signal = died[0].how.removeprefix("signal ")
    return {
        "verdict": "crash",
        "check": f"signal:{signal}",
        "explanation": (
            f"{pipeline} corrupts the heap (an out-of-bounds write): a process that ran "
            f"only the program under {pipeline} on fresh inputs, then had glibc check its "
            f"heap, died ({died[0].how}) in {len(died)} of {TRIES} runs; eager alone did "
            f"not in {TRIES}. The worker had died of it later, in aliasfuzz: "
            f"{first.get('summary', '')}"
        ),
        "diff": "",
        # the confirmation is this finding's replay: another run in a worker may die in
        # aliasfuzz or survive with wrong values (campaign.pool does not shrink it)
        "heap": f"{len(died)}/{TRIES}",
    }
