"""Seed cases (``shared/cases/*.py``) through the pipelines: observed behaviour, not verdicts.

A case file defines ``program`` and ``inputs()`` in plain PyTorch, and an ``expect:`` block
naming pipelines (see ``shared/cases/README.md``); ``fuzz.casefile.load_case``
imports a file once per process (custom ops register on import). :func:`observe` runs it through one pipeline on
fresh inputs, next to an eager run, and records whether outputs, inputs after the call
and output/input aliasing equal eager's, plus the decisions. The oracle turns these
observations into verdicts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import torch

from aliasfuzz.fuzz.casefile import Case, load_case
from aliasfuzz.passes.execution import Execution
from aliasfuzz.passes.pipelines import PipelineOptions, run_function

__all__ = ["Case", "Observation", "load_case", "observe", "same_value"]

_EXPECT_LINE = re.compile(r"^\s+([\w-]+):\s*([\w-]+)")


@dataclass
class Observation:
    """What one pipeline did with a case, compared with eager on identical fresh inputs.

    ``*_equal`` are None when the pipeline failed (see ``execution.failure``).
    ``differences`` lists what differed, one line each.
    """

    case: str
    pipeline: str
    execution: Execution
    eager_error: str | None = None
    outputs_equal: bool | None = None
    inputs_equal: bool | None = None
    aliases_equal: bool | None = None
    differences: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """JSON-ready record of the observation."""
        ex = self.execution
        return {
            "case": self.case,
            "pipeline": self.pipeline,
            "failure": None if ex.failure is None else vars(ex.failure),
            "eager_error": self.eager_error,
            "outputs_equal": self.outputs_equal,
            "inputs_equal": self.inputs_equal,
            "aliases_equal": self.aliases_equal,
            "differences": self.differences,
            "decisions": [vars(d) for d in ex.decisions],
            "counters": ex.counters,
            "timings": ex.timings,
        }


def same_value(a: Any, b: Any) -> str | None:
    """Why ``a`` differs from eager's ``b`` (cases' tolerances), or None when equal.

    Floating tensors compare with rtol 1e-4 / atol 1e-5, others exactly; also shape,
    dtype and ``requires_grad``.
    """
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            return f"{type(a).__name__} vs {type(b).__name__}"
        return None if a == b else f"{a!r} != {b!r}"
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"{a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}"
    if a.requires_grad != b.requires_grad:
        return f"requires_grad {a.requires_grad} vs {b.requires_grad}"
    a, b = a.detach().cpu(), b.detach().cpu()
    if a.is_floating_point() or a.is_complex():
        ok = torch.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True)
    else:
        ok = torch.equal(a, b)
    return (
        None if ok else f"values differ: {a.flatten()[:8].tolist()} vs {b.flatten()[:8].tolist()}"
    )


def _compare(obs: Observation, ref: Execution) -> None:
    ex = obs.execution
    pairs = (("output", ex.outputs, ref.outputs), ("input", ex.inputs_after, ref.inputs_after))
    for what, got, want in pairs:
        diffs = [f"{what}s: {len(got)} vs {len(want)}"] if len(got) != len(want) else []
        for i, (a, b) in enumerate(zip(got, want, strict=False)):
            why = same_value(a, b)
            if why:
                diffs.append(f"{what} {i}: {why}")
        setattr(obs, f"{what}s_equal", not diffs)
        obs.differences += diffs
    obs.aliases_equal = ex.aliases == ref.aliases
    if not obs.aliases_equal:
        obs.differences.append(f"aliases {ex.aliases} vs eager {ref.aliases}")


def observe(case: Case, pipeline: str) -> Observation:
    """Run ``case`` through ``pipeline`` ``case.calls`` times; record the last call.

    Each call gets fresh ``inputs()``, as does the eager reference it is compared with.
    """
    ex = ref = None
    for _ in range(max(case.calls, 1)):
        ref = run_function("eager", case.module.program, case.module.inputs(), device=case.device)
        ex = run_function(
            pipeline,
            case.module.program,
            case.module.inputs(),
            device=case.device,
            options=PipelineOptions.for_case(pipeline, case.pipeline_options),
        )
    assert ex is not None and ref is not None
    obs = Observation(case.name, pipeline, ex)
    if ref.failure is not None:
        obs.eager_error = f"{ref.failure.error_type}: {ref.failure.message}"
    elif ex.failure is None:
        _compare(obs, ref)
    return obs
