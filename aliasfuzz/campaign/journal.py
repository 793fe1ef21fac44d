"""The campaign journal: an append-only JSON-lines log that makes ``--resume`` lossless.

``<state>/runs/<campaign>/journal.jsonl`` gets one event per line, flushed and fsync'ed
before the driver moves on:

* ``{"t": "task", "i": <program index>, "pipeline": ..., "outcome": {...}, "op_kinds": [...]}``;
  a task that crashed or timed out is written once its re-run in a fresh worker has
  answered, with the re-run's outcome (and the first run under ``outcome.first`` when the
  two differ: a flaky crash, e.g. a worker killed from outside);
* ``{"t": "finding", "i": ..., "pipeline": ..., "id": <corpus id> | null, "new": bool, ...}``
  once the finding is shrunk and its corpus entry is on disk (``id`` null: a duplicate);
* ``{"t": "end", "status": "done", "flaky": <tasks whose crash or timeout did not recur>}``.

A task whose outcome is a finding but has no ``finding`` event was in flight when the
campaign died: ``--resume`` shrinks and writes it again (corpus writes are idempotent by
id). A torn last line (``kill -9`` mid-write) is ignored.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["Journal"]


class Journal:
    """Append-only event log at ``path``; :meth:`events` reads it back."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._drop_torn_tail()
        self._f = open(self.path, "a")  # noqa: SIM115 - kept open for the campaign

    def _drop_torn_tail(self) -> None:
        # A kill -9 mid-write leaves a last line without its newline; appending after it
        # would glue the next event onto it, so cut it off before resuming.
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            with open(self.path, "r+b") as f:
                f.truncate(data.rfind(b"\n") + 1)

    def append(self, event: dict[str, Any]) -> None:
        """Write one event durably (flush + fsync)."""
        self._f.write(json.dumps(event, sort_keys=True) + "\n")
        self._f.flush()
        os.fsync(self._f.fileno())

    def close(self) -> None:
        self._f.close()

    @staticmethod
    def events(path: str | Path) -> list[dict[str, Any]]:
        """All complete events of the journal at ``path`` (a torn last line is dropped)."""
        p = Path(path)
        if not p.exists():
            return []
        out = []
        lines = p.read_text().split("\n")
        for n, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                if n >= len(lines) - 2:  # only the last line may be torn
                    break
                raise
        return out
