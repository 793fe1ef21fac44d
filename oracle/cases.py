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

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.casefile import import_case, module_name
from aliasfuzz.oracle.verdict import Verdict

__all__ = ["Case", "judge_case", "load_case", "parse_header"]

_COMPILED = ("aot_eager", "inductor")


@dataclass
class Case:
    """A loaded case file: its module, expected verdicts, device and options."""

    path: Path
    module: ModuleType
    expect: dict[str, str]
    device: str
    report: str = ""
    calls: int = 1
    pipeline_options: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def needs_gpu(self) -> bool:
        return self.device.startswith("cuda")


def parse_header(source: str) -> tuple[dict[str, str], str, str]:
    """``(expect, device, report)`` from a case file's module docstring.

    Raises :class:`InvalidArgument` when the file is not Python, has no ``expect:`` block,
    or names a verdict that does not exist.
    """
    try:
        doc = ast.get_docstring(ast.parse(source)) or ""
    except SyntaxError as e:
        raise InvalidArgument(f"case file is not valid Python: {e}") from None
    expect: dict[str, str] = {}
    device, report, in_expect = "cpu", "", False
    for line in doc.splitlines():
        if line.strip() == "expect:":
            in_expect = True
            continue
        if in_expect and line.startswith((" ", "\t")) and ":" in line:
            name, verdict = line.split("#")[0].split(":", 1)
            expect[name.strip()] = verdict.strip()
            continue
        in_expect = False
        key, _, value = line.partition(":")
        if key == "device":
            device = value.split("#")[0].strip()
        elif key == "report":
            report = value.strip()
    if not expect:
        raise InvalidArgument("case file has no 'expect:' block in its docstring")
    for v in expect.values():
        if v != "wrong-profile":
            Verdict.parse(v)
    return expect, device, report


def load_case(path: str | Path) -> Case:
    """Import a case file (once per process) and read its header and options.

    Raises :class:`InvalidArgument` for a missing file or one not in the case format.
    """
    p = Path(path)
    if not p.is_file():
        raise InvalidArgument(f"{path}: no such case file")
    expect, device, report = parse_header(p.read_text())
    name = module_name(p)
    module = sys.modules.get(name)
    if module is None:
        if device.startswith("cuda"):
            import torch

            if not torch.cuda.is_available():
                # not importable without a GPU in general (device="cuda" at import time)
                return Case(p, ModuleType(name), expect, device, report)
        module = import_case(p)
    for attr in ("program", "inputs"):
        if not callable(getattr(module, attr, None)):
            raise InvalidArgument(f"{path}: case file defines no {attr}()")
    opts = getattr(module, "pipeline_options", {}) or {}
    if not isinstance(opts, dict):
        raise InvalidArgument(f"{path}: pipeline_options must be a dict")
    calls = getattr(module, "calls", 1)
    if not isinstance(calls, int) or calls < 1:
        raise InvalidArgument(f"{path}: calls must be an int >= 1")
    return Case(p, module, expect, device, report, calls, opts)


def _pipeline_options(case: Case, pipeline: str):
    from aliasfuzz.passes.pipelines import PipelineOptions

    cfg = dict(case.pipeline_options.get(pipeline, {}))
    v2 = cfg.pop("enable_auto_functionalized_v2", True)
    return PipelineOptions(auto_functionalized_v2=v2, inductor_config=cfg)


def judge_one(case: Case, pipeline: str):
    """Judge ``case`` under one compiled pipeline; the worst :class:`Judgement` of its calls."""
    from aliasfuzz.oracle.judge import judge

    worst = None
    for _ in range(case.calls):
        j = judge(case.module.program, pipeline, _pipeline_options(case, pipeline),
                  case.device, inputs=case.module.inputs)
        if worst is None or j.verdict.severity < worst.verdict.severity:
            worst = j
    return worst


def judge_case(path: str | Path, pipelines: list[str] | None = None) -> list[dict[str, Any]]:
    """One row ``{pipeline, verdict, expected, explanation}`` per pipeline of the case.

    ``verdict`` is ``skipped`` for a cuda case without a GPU. Pipelines default to those of
    the ``expect`` block; ``expected`` is None for one the block does not name.
    """
    case = load_case(path)
    rows = []
    for pipeline in pipelines or list(case.expect):
        row = {"pipeline": pipeline, "expected": case.expect.get(pipeline)}
        if case.needs_gpu and not _has_cuda():
            row.update(verdict="skipped", explanation="needs a GPU")
        elif pipeline == "torchscript":
            from aliasfuzz.oracle.ts_invariants import judge_torchscript_case

            verdict, why = judge_torchscript_case(case.module)
            row.update(verdict=verdict, explanation=why)
        elif pipeline in _COMPILED or pipeline in _known_pipelines():
            j = judge_one(case, pipeline)
            row.update(verdict=j.verdict.value, explanation=j.explanation, diff=j.diff)
        else:
            raise InvalidArgument(f"{case.path.name}: unknown pipeline {pipeline!r}")
        rows.append(row)
    return rows


def _has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def _known_pipelines() -> set[str]:
    from aliasfuzz.passes.pipelines import PIPELINES

    return set(PIPELINES)
