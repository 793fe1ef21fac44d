"""Case files (../shared/cases format): load one, judge it per pipeline as its ``expect`` says.

A case file is a Python module with ``program`` and ``inputs`` (fresh inputs per call), an
``expect:`` block and a ``device:`` line in its docstring, and optionally ``setup()``,
``calls = N`` and ``pipeline_options = {pipeline: {...}}`` (README of the cases folder).
Loading it runs its code: a case file is a program the user asked to check.

:func:`judge_case` returns one row per pipeline: ``aot_eager`` and ``inductor`` through
:func:`aliasfuzz.oracle.judge.judge` (``calls`` times on fresh inputs, the worst verdict
wins), ``torchscript`` through :func:`aliasfuzz.oracle.ts_invariants.judge_torchscript_case`
(the TorchScript engineer's judge of the same format). ``pipeline_options`` for
``inductor`` / ``aot_eager`` are ``torch._inductor.config`` names;
``enable_auto_functionalized_v2`` maps to the adapters' own switch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz import casefile
from aliasfuzz.fuzz.casefile import Case
from aliasfuzz.oracle.verdict import Verdict

__all__ = ["Case", "judge_case", "load_case", "parse_header"]

_COMPILED = ("aot_eager", "inductor")


def parse_header(source: str, expect_block: bool = True) -> tuple[dict[str, str], str, str]:
    """:func:`aliasfuzz.fuzz.casefile.parse_header`, checking that every verdict exists.

    Raises :class:`InvalidArgument` when the file is not Python, has no ``expect:`` block
    (unless ``expect_block`` is false), or names a verdict that does not exist.
    """
    expect, device, report = casefile.parse_header(source, expect_block)
    for v in expect.values():
        if v != "wrong-profile":
            Verdict.parse(v)
    return expect, device, report


def load_case(path: str | Path, expect_block: bool = True) -> Case:
    """:func:`aliasfuzz.fuzz.casefile.load_case` after checking the header's verdicts
    (``expect_block`` false: a file without an ``expect:`` block is a case too)."""
    p = Path(path)
    if p.is_file():
        parse_header(p.read_text(), expect_block)
    return casefile.load_case(p, expect_block)


def check_inputs(case: Case) -> None:
    """Raise :class:`InvalidArgument` (one line naming the file) when the case's ``inputs()``
    returns something other than a tuple or list, or an item that is neither a tensor nor
    None (an omitted optional tensor, as campaign programs are fed): the pipelines read a
    program's arguments as tensors, and an int was reported as a TorchScript crash (fresh
    user 40's B2). An ``inputs()`` that raises is left to the caller, which reports it."""
    import torch

    try:
        ins = case.module.inputs()
    except Exception:  # noqa: BLE001 -- check's load or the judge reports it
        return
    fix = "return a tuple or list of tensors (None for an omitted optional one)"
    if not isinstance(ins, tuple | list):
        raise InvalidArgument(f"{case.path}: inputs() returns {_a(ins)}; {fix}")
    for i, x in enumerate(ins):
        if not (x is None or isinstance(x, torch.Tensor)):
            raise InvalidArgument(
                f"{case.path}: inputs()[{i}] is {_a(x)}, not a tensor; {fix}")


def _a(value: Any) -> str:
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def check_returns(case: Case) -> None:
    """Raise :class:`InvalidArgument` (one line naming the file) when the case's program,
    run once eagerly on its ``inputs()``, returns a mapping, a set or a nested sequence: the
    oracle compares outputs one by one (:func:`aliasfuzz.fuzz.eager.normalize_outputs`:
    None, one output, or a tuple or list of them), and a dict raised a traceback in the
    comparison (fresh user 40's B1). A program or ``inputs()`` that raises is left to the
    judge, which reports it."""
    from aliasfuzz.fuzz.eager import normalize_outputs

    try:
        ret = case.module.program(*case.module.inputs())
    except Exception:  # noqa: BLE001 -- eager's failure is the judge's to report
        return
    for o in normalize_outputs(ret):
        if isinstance(o, dict | set | frozenset | list | tuple):
            raise InvalidArgument(
                f"{case.path}: program returns {'a nested ' if o is not ret else 'a '}"
                f"{type(o).__name__}; return None, one value (a tensor or a number), or a flat "
                "tuple or list of them")


def judge_one(case: Case, pipeline: str):
    """Judge ``case`` under one compiled pipeline; the worst :class:`Judgement` of its calls."""
    from aliasfuzz.oracle.judge import judge
    from aliasfuzz.passes.pipelines import PipelineOptions

    worst = None
    for _ in range(case.calls):
        j = judge(case.module.program, pipeline,
                  PipelineOptions.for_case(pipeline, case.pipeline_options),
                  case.device, inputs=case.module.inputs)
        if worst is None or j.verdict.severity < worst.verdict.severity:
            worst = j
    return worst


def judge_case(path: str | Path, pipelines: list[str] | None = None) -> list[dict[str, Any]]:
    """One row ``{pipeline, verdict, expected, explanation}`` per pipeline of the case
    (``check`` too, the failed check of the oracle, on the pipelines it judges).

    ``verdict`` is ``skipped`` for a cuda case without a GPU. Pipelines default to those of
    the ``expect`` block, which only then is required; ``expected`` is None for one the
    block does not name.
    """
    case = load_case(path, expect_block=not pipelines)
    if not (case.needs_gpu and not _has_cuda()):
        check_inputs(case)  # first: check_returns calls the program on them
        check_returns(case)
    rows = []
    for pipeline in pipelines or list(case.expect):
        row = {"pipeline": pipeline, "expected": case.expect.get(pipeline)}
        if case.needs_gpu and not _has_cuda():
            row.update(verdict="skipped", explanation="needs a GPU")
        elif pipeline == "torchscript":
            from aliasfuzz.oracle.ts_invariants import judge_torchscript_case

            verdict, why = judge_torchscript_case(case.module)
            row.update(verdict=verdict, explanation=why)
            if verdict in ("miscompile", "crash"):  # the campaign's check of this pipeline
                # (fresh user 39's B14: every other pipeline's finding line named its check)
                row["check"] = "torchscript"
        elif pipeline in _COMPILED or pipeline in _known_pipelines():
            j = judge_one(case, pipeline)
            row.update(verdict=j.verdict.value, check=j.check, explanation=j.explanation,
                       diff=j.diff)
        else:
            from aliasfuzz.campaign.options import _unknown_pipeline

            # the whole path and the known names, as every other case-file error (fresh
            # user 39's B15: a basename and no list for a typo in an expect block)
            raise InvalidArgument(f"{case.path}: {_unknown_pipeline(pipeline, _known_pipelines())}")
        rows.append(row)
    return rows


def _has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def _known_pipelines() -> set[str]:
    from aliasfuzz.passes.pipelines import PIPELINES

    return set(PIPELINES)
