"""The generated tables of ``bench/README.md`` from ``bench/results.json`` (for calibrate.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["write_readme_table"]

BEGIN, END = "<!-- calibrate:begin -->", "<!-- calibrate:end -->"


def _table(results: dict[str, Any]) -> str:
    lines = [
        "| mutant | pipelines | expected | detected | budget s | s to detection | verdict (check) "
        "| programs run | min. statements |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in sorted(results.get("mutants", {}).items()):
        det = {True: "yes", False: "**no**", None: f"n/a: {r.get('note', '')}"}[r.get("detected")]
        verdict = f"{r['verdict']} ({r.get('check')})" if r.get("detected") else ""
        d = r.get("direct_loop") or {}
        if d.get("detected"):
            det += f" (ts_invariants loop: yes, {d['seconds_to_detection']} s, {d['verdict']})"
        lines.append(
            f"| {name} | {', '.join(r['pipelines'])} | {', '.join(r['expected'])} | {det} "
            f"| {r.get('budget_s', '')} | {r.get('seconds_to_detection', '')} | {verdict} | {r.get('programs_run', '')} "
            f"| {r.get('minimized_statements', '')} |"
        )
    rs = results.get("repro_size")
    if rs:
        lines += [
            "",
            f"Minimized repro size: median {rs['median_minimized_statements']} "
            f"statements over {rs['findings']} findings of the mutant campaigns.",
        ]
    if results.get("throughput"):
        lines += [
            "",
            "| pipeline | workers | programs | programs/s | steady programs/s |",
            "|---|---|---|---|---|",
        ]
        for p, rows in sorted(results["throughput"].items()):
            for t in rows:
                lines.append(
                    f"| {p} | {t['workers']} | {t['programs']} | "
                    f"{t['programs_per_s']} | {t['steady_programs_per_s']} |"
                )
    if results.get("cost"):
        lines += [
            "",
            "| pipeline | baseline | bare ms | adapter ms | judged ms | oracle ms "
            "| adapter/bare | judged/bare |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for p, c in sorted(results["cost"].items()):
            lines.append(
                f"| {p} | {c['baseline']} | {c['bare_median_ms']} | {c['pipeline_median_ms']} "
                f"| {c['judged_median_ms']} | {c['oracle_median_ms']} "
                f"| {c['harness_overhead_x']} | {c['judged_overhead_x']} |"
            )
    run = results.get("runs", [{}])[-1]
    lines += [
        "",
        f"Last run: {run.get('date')} on {run.get('cores')} cores, "
        f"`python bench/calibrate.py {' '.join(run.get('argv', []))}`.",
    ]
    return "\n".join(lines)


def write_readme_table(results: dict[str, Any], readme: Path) -> None:
    """Replace the text between the calibrate markers of ``readme`` by the tables."""
    text = readme.read_text() if readme.exists() else f"# Benchmarks\n\n{BEGIN}\n{END}\n"
    if BEGIN not in text:
        text += f"\n{BEGIN}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    readme.write_text(f"{head}{BEGIN}\n{_table(results)}\n{END}{tail}")
