"""The live progress display of a campaign (rich): programs, programs/s, verdict counts.

On a terminal it is a progress bar over the budget (programs or seconds); elsewhere (CI
logs, pipes) it prints nothing while running and the CLI prints the summary lines.
"""

from __future__ import annotations

import time
from collections import Counter

from rich.console import Console
from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as _RichProgress

__all__ = ["Progress"]


class Progress:
    """Context manager; :meth:`update` takes a :class:`CampaignResult` (duck-typed)."""

    def __init__(self, opts, *, show: bool, done: int = 0):
        self.opts = opts
        self.console = Console(stderr=True)
        self.enabled = show and self.console.is_terminal
        self.t0 = time.monotonic()
        self.base = done
        self._bar = _RichProgress(
            TextColumn("[bold]{task.fields[what]}"),
            BarColumn(),
            TextColumn("{task.fields[rate]:>6.1f} programs/s"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[counts]}"),
            console=self.console,
            transient=False,
            disable=not self.enabled,
        )
        total = opts.programs if opts.programs is not None else opts.time
        self._task = self._bar.add_task(
            "campaign", total=total, what="0 programs", rate=0.0, counts=""
        )

    def __enter__(self) -> Progress:
        self._bar.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._bar.__exit__(*exc)

    def update(self, res) -> None:
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.t0
        by_verdict: Counter = Counter()
        for (_, v), n in res.verdicts.items():
            by_verdict[v] += n
        counts = " ".join(f"{v}:{n}" for v, n in sorted(by_verdict.items()))
        done = res.programs if self.opts.programs is not None else min(elapsed, self.opts.time)
        self._bar.update(
            self._task,
            completed=done,
            what=f"{res.programs} programs",
            rate=max(0, res.programs - self.base) / elapsed if elapsed else 0.0,
            counts=f"{counts} findings:{len(res.findings)}",
        )
