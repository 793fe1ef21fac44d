"""The per-stage cost table of a campaign: where its workers' time went.

Workers count their time per stage (:mod:`aliasfuzz.fuzz.costs`) and send it with each
outcome (``costs``); the pool adds what only the parent sees (a child's start, the round
trip), the driver adds generation, shrinking and blaming; every task and finding event of
the journal carries its ``costs`` (seconds per stage), and :attr:`CampaignResult.stages` sums them. The run
summary (``aliasfuzz run``), the report (``summary.json`` ``costs``, the HTML "Where the
time goes" table) and ``bench/stages.py`` print the same :func:`table`.

Shares are of the campaign's worker time, wall seconds x workers (in one process: of its
wall time); what no stage claims (idle workers, a driver waiting) is the ``unaccounted``
row. Generation runs in the driver, beside the workers, and is counted like a stage.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["STAGES", "format_table", "table", "totals"]

#: Stage (``*`` standing for a pipeline name) -> what its seconds cover, in table order.
STAGES: dict[str, str] = {
    "generate": "generating the program (driver: generate_one)",
    "worker.start": "starting a worker child (torch import until it is ready)",
    "worker.ipc": "a task's round trip not spent in the child's stages (pipes, JSON)",
    "worker": "the child's own bookkeeping around a task (decoding, encoding, CUDA probe)",
    "render": "rendering a program to source and importing it",
    "eager": "the eager reference run (fresh inputs included)",
    "*.trace": "the pipeline's front end: Dynamo capture and AOTAutograd (to its compiler)",
    "*.compile": "the pipeline's compiler: post-grad passes, Inductor lowering and codegen",
    "*.run": "calling the compiled program",
    "pipeline": "adapter work outside the pipeline's clock (inputs, hygiene, capture)",
    "pipeline.shared": "one Dynamo capture shared by a program's pipelines (trace once)",
    "shared.lost": "a shared task whose worker died, hung or failed (then run one by one)",
    "oracle.checks": "the oracle's checks: validation, differential checks, ground truth",
    "oracle.confirm": "confirming claims by execution (re-runs of the pipeline included)",
    "oracle.second_opinion": "second eager opinions of a finding (one eager meaning)",
    "crash.rerun": "re-running a crash or timeout in a fresh worker before believing it",
    "known_first": "a known bug's control and the cut of a finding not shrunk (known-first)",
    "shrink": "minimizing a finding (every re-execution included)",
    "blame": "cutting a finding's pipeline stage by stage (and the full-compile check)",
}


def _key(name: str) -> tuple[int, str]:
    if name in STAGES:
        return list(STAGES).index(name), ""
    pipeline, _, part = name.rpartition(".")
    wild = f"*.{part}"
    at = list(STAGES).index(wild) if wild in STAGES else len(STAGES)
    # per pipeline the three clock stages together, in table order
    return list(STAGES).index("*.trace"), f"{pipeline}:{at}"


def totals(events: Iterable[Mapping[str, Any]]) -> Counter:
    """Seconds per stage summed over journal events (each may carry ``costs``)."""
    out: Counter = Counter()
    for e in events:
        out.update(e.get("costs") or {})
    return out


def table(
    stages: Mapping[str, float], wall: float, workers: int = 1, programs: int = 0
) -> list[dict[str, Any]]:
    """Rows ``{"stage", "seconds", "ms_per_program", "share"}`` in :data:`STAGES` order,
    then ``unaccounted`` and ``total`` (``wall * workers`` seconds of worker time).

    ``share`` is a fraction of ``wall * workers``; ``ms_per_program`` is None without
    programs. Raises ``ValueError`` for a negative ``wall`` or ``workers`` < 1.
    """
    if wall < 0 or workers < 1:
        raise ValueError("table needs wall >= 0 and workers >= 1")
    capacity = wall * workers
    rows = []
    for name in sorted(stages, key=_key):
        rows.append(_row(name, float(stages[name]), capacity, programs))
    counted = sum(float(v) for v in stages.values())
    rows.append(_row("unaccounted", max(0.0, capacity - counted), capacity, programs))
    rows.append(_row("total", max(capacity, counted), capacity, programs))
    return rows


def _row(name: str, seconds: float, capacity: float, programs: int) -> dict[str, Any]:
    return {
        "stage": name,
        "seconds": round(seconds, 4),
        "ms_per_program": round(1000 * seconds / programs, 2) if programs else None,
        "share": round(seconds / capacity, 4) if capacity else None,
    }


def format_table(rows: list[dict[str, Any]]) -> str:
    """The rows of :func:`table` as aligned text (one line per stage)."""
    lines = [f"{'stage':<34} {'seconds':>10} {'ms/program':>11} {'share':>7}"]
    for r in rows:
        ms = "" if r["ms_per_program"] is None else f"{r['ms_per_program']:.1f}"
        share = "" if r["share"] is None else f"{100 * r['share']:.1f}%"
        lines.append(f"{r['stage']:<34} {r['seconds']:>10.3f} {ms:>11} {share:>7}")
    return "\n".join(lines)
