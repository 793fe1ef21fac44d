"""Charts for the report: matplotlib (Agg) figures as ``data:image/png;base64,...`` URIs,
so the HTML file is self-contained and needs no network to view.
"""

from __future__ import annotations

import base64
import io
from typing import Any

__all__ = ["coverage_chart", "throughput_chart", "trend_chart"]


def _uri(fig) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _figure(w: float = 6.0, h: float = 2.8):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(w, h))


def throughput_chart(seconds: dict[str, list[float]]) -> str | None:
    """Box plot of seconds per task, one box per pipeline (None when there is no data)."""
    data = {p: s for p, s in seconds.items() if s}
    if not data:
        return None
    fig, ax = _figure()
    ax.boxplot(list(data.values()), showfliers=False)
    ax.set_xticks(range(1, len(data) + 1), list(data), rotation=15)
    ax.set_ylabel("seconds per program")
    ax.set_title("time per program and pipeline")
    return _uri(fig)


def coverage_chart(programs_with_kind: dict[str, int]) -> str | None:
    """Bar chart: number of programs containing each op kind."""
    if not programs_with_kind:
        return None
    fig, ax = _figure()
    ax.bar(list(programs_with_kind), list(programs_with_kind.values()), color="#4a7ab5")
    ax.set_ylabel("programs")
    ax.set_title("op-kind coverage")
    ax.tick_params(axis="x", rotation=20)
    return _uri(fig)


def trend_chart(history: list[dict[str, Any]]) -> str | None:
    """Throughput and findings per campaign, oldest first (None for fewer than two)."""
    if len(history) < 2:
        return None
    fig, ax = _figure()
    xs = range(len(history))
    ax.plot(xs, [h["throughput"] or 0 for h in history], marker="o", label="programs/s")
    ax2 = ax.twinx()
    ax2.bar(xs, [h["findings"] for h in history], alpha=0.3, color="#c0392b", label="findings")
    ax.set_xlabel("campaign (oldest first)")
    ax.set_ylabel("programs/s")
    ax2.set_ylabel("findings")
    ax.set_title("trends across campaigns")
    return _uri(fig)
