"""Campaign reports: one self-contained HTML file, ``summary.json`` and issue drafts.

:func:`write_report` collects a campaign's data (:mod:`.data`), draws the charts
(:mod:`.charts`, embedded as base64 PNG) and renders the Jinja2 template; the page has
no scripts and no external resources. Each new root cause also gets a Markdown draft of
an upstream PyTorch issue under ``upstream/`` (:mod:`.upstream`).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

__all__ = ["latest_campaign", "render_html", "write_report"]


def latest_campaign(state: str | Path) -> str | None:
    """Id of the most recently started campaign in ``state``'s history, or None."""
    from aliasfuzz.campaign.history import History

    if not (Path(state) / "history.sqlite").exists():
        return None
    rows = History(Path(state) / "history.sqlite").campaigns()
    return rows[-1]["id"] if rows else None


def render_html(summary: dict) -> str:
    """The HTML page for ``summary`` (the dict of :func:`aliasfuzz.report.data.collect`)."""
    import jinja2

    from aliasfuzz.oracle.verdict import FINDINGS, Verdict
    from aliasfuzz.report import charts
    from aliasfuzz.report._template import TEMPLATE

    seen = {v for counts in summary["verdicts"].values() for v in counts}
    names = [v.value for v in Verdict if v.value in seen] + sorted(
        seen - {v.value for v in Verdict}
    )
    kind_findings: Counter = Counter()
    finding_names = {v.value for v in FINDINGS}
    for k, counts in summary["coverage"]["verdicts_by_kind"].items():
        kind_findings[k] = sum(n for v, n in counts.items() if v in finding_names)
    env = jinja2.Environment(autoescape=True, undefined=jinja2.ChainableUndefined)
    return env.from_string(TEMPLATE).render(
        c=summary["campaign"],
        verdicts=summary["verdicts"],
        verdict_names=names,
        finding_names=finding_names,
        confusion=summary["confusion"],
        rejections=summary["rejections"],
        refusals=summary.get("unsupported", {}),
        undefined_eager=summary.get("undefined_eager", {}),
        unknown=summary.get("unknown", {}),
        causes=summary["root_causes"],
        dismissed=summary.get("dismissed") or [],
        deduplicated=summary.get("deduplicated") or [],
        gpus=summary.get("gpus") or [],
        counts=summary["counts"],
        internal=summary.get("internal_errors") or {"count": 0, "errors": []},
        coverage=summary["coverage"],
        kind_findings=kind_findings,
        seconds=summary["seconds_per_task"],
        costs=summary.get("costs") or {"rows": []},
        history=summary["history"],
        charts={
            "coverage": charts.coverage_chart(summary["coverage"]["programs_with_kind"]),
            "throughput": charts.throughput_chart(summary["seconds_per_task"]),
            "trend": charts.trend_chart(summary["history"]),
        },
    )


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_report(cid: str, *, state: str | Path, corpus: str | Path, out: str | Path) -> Path:
    """Write ``out/index.html``, ``out/summary.json`` and, for each new root cause, an
    upstream issue draft ``out/upstream/<entry id>.md`` (:mod:`.upstream`) for campaign
    ``cid``; return the HTML path.

    Raises :class:`~aliasfuzz.errors.InvalidArgument` when there is no such campaign.
    """
    from aliasfuzz.report.data import collect
    from aliasfuzz.report.upstream import write_drafts

    summary = collect(cid, state=state, corpus=corpus)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    drafts = write_drafts(summary["root_causes"], corpus, out)
    summary["upstream_drafts"] = [str(p.relative_to(out)) for p in drafts]
    _atomic_write(out / "summary.json", json.dumps(summary, indent=1, sort_keys=True) + "\n")
    _atomic_write(out / "index.html", render_html(summary))
    return (out / "index.html").resolve()
