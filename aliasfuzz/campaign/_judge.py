"""The one place the campaign calls the generator, the pipelines and the oracle.

Everything crosses this boundary as plain data: programs as :class:`Program`, outcomes as
JSON-able dicts (they travel between worker processes, into the journal and the corpus)::

    {"verdict": "miscompile", "check": "values", "explanation": "...", "diff": "...",
     "decision_kinds": ["auto_functionalized_v2"],
     "decisions": [{"kind": "...", "reinplaced": true, "truth": "safe"}], "seconds": 0.03}

While ``fuzz/sample.py``, ``passes/`` (``run_pipeline``, ``PIPELINES``) or
``oracle/judge.py`` are missing, :mod:`._fallback` stands in, so wiring the real ones is a
change to this file only.
"""

from __future__ import annotations

import importlib.util
import time
from typing import Any

from aliasfuzz.campaign import _debug, _fallback
from aliasfuzz.fuzz.ir import Program

__all__ = ["evaluate", "generate", "judge_case", "pipeline_names"]


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _real_passes() -> bool:
    return _has("aliasfuzz.passes.pipelines")


def pipeline_names() -> set[str]:
    """Names ``--pipelines`` accepts (debug pipelines only when enabled)."""
    names: set[str] = set()
    if _real_passes():
        from aliasfuzz.passes.pipelines import PIPELINES

        names |= set(PIPELINES)
    else:
        names |= set(_fallback.PIPELINES)
    if _debug.enabled():
        names |= set(_debug.DEBUG_PIPELINES)
    return names


def generate(seed: int, index: int, max_statements: int = 8) -> Program:
    """Program ``index`` of ``seed``: a pure function of its arguments and the versions."""
    if _has("aliasfuzz.fuzz.sample"):
        from aliasfuzz.fuzz import sample

        return sample.generate_one(seed, index, max_statements=max_statements)
    return _fallback.generate(1, seed * 1_000_003 + index, max_statements)[0]


def evaluate(
    program: Program, pipeline: str, device: str, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Run ``program`` through ``pipeline`` and judge it; a JSON-able outcome (see above)."""
    t0 = time.perf_counter()
    if pipeline in _debug.DEBUG_PIPELINES:
        out = _debug.run(program, pipeline)
    elif _real_passes() and _has("aliasfuzz.oracle.judge"):
        out = _evaluate_real(program, pipeline, device, options or {})
    else:
        out = _fallback.run(program, pipeline, device)
    out.setdefault("check", None)
    out.setdefault("explanation", "")
    out.setdefault("diff", "")
    out.setdefault("decisions", [])
    out.setdefault(
        "decision_kinds", sorted({d["kind"] for d in out["decisions"] if not d.get("reinplaced")})
    )
    out["seconds"] = time.perf_counter() - t0
    return out


def _evaluate_real(program: Program, pipeline: str, device: str, options: dict) -> dict[str, Any]:
    from aliasfuzz.fuzz.eager import make_inputs, run_eager
    from aliasfuzz.passes.pipelines import PipelineOptions, run_pipeline

    ref = run_eager(program, device=device)
    if ref.error is not None:
        return {"verdict": "invalid-program", "check": "eager", "explanation": repr(ref.error)}
    ex = run_pipeline(
        pipeline, program, make_inputs(program, device), device, PipelineOptions(**options)
    )
    decisions = [
        {"kind": d.kind, "reinplaced": d.reinplaced, "truth": "unknown", "statement": d.statement}
        for d in ex.decisions
    ]
    if _has("aliasfuzz.oracle.judge"):
        out = _oracle(program, ex, ref, decisions)
    elif ex.failure is not None:
        f = ex.failure
        out = {
            "verdict": "crash",
            "check": f.stage,
            "explanation": f"{f.error_type}: {f.message}"[:500],
        }
    else:
        out = _fallback.differential([t.name for t in program.inputs], ref, ex)
    out["decisions"] = decisions
    out["decision_kinds"] = sorted({d.kind for d in ex.decisions})
    return out


def _oracle(program: Program, ex, ref, decisions: list[dict[str, Any]]) -> dict[str, Any]:
    from aliasfuzz.oracle.judge import judge

    j = judge(program, ex)
    truths = getattr(j, "ground_truth", None) or {}
    for d, dec in zip(decisions, ex.decisions, strict=False):
        d["truth"] = str(truths.get(dec.node, "unknown"))
    return {
        "verdict": j.verdict.value,
        "check": getattr(j, "check", None),
        "explanation": str(getattr(j, "explanation", "")),
        "diff": str(getattr(j, "diff", "") or ""),
    }


def judge_case(path: str, pipelines: list[str] | None = None) -> list[dict[str, Any]]:
    """Judge a /work/shared/cases-format file; one row per pipeline.

    Row: ``{"pipeline", "verdict", "expected", "explanation"}``; ``expected`` is None for a
    pipeline without an ``expect`` line. Raises :class:`InvalidArgument` for a file that is
    not in the case format.
    """
    if _has("aliasfuzz.oracle.cases") and _has("aliasfuzz.oracle.judge"):
        from aliasfuzz.oracle import cases

        if hasattr(cases, "judge_case"):
            return list(cases.judge_case(path, pipelines))
    from aliasfuzz.campaign import _cases

    return _cases.judge_case(path, pipelines)
