"""SQLite history of campaigns: one row per campaign, verdict counts and findings.

Schema (``<state>/history.sqlite``):

* ``campaigns(id TEXT PK, started REAL, finished REAL, seed, device, pipelines TEXT (comma
  list), budget TEXT, programs INT, tasks INT, seconds REAL, throughput REAL (programs/s),
  status TEXT ('running' | 'done' | 'interrupted' | 'failed'), versions TEXT (JSON),
  internal_errors INT (aliasfuzz's own failures: harness exceptions and worker deaths
  outside the system under test; a column added later, 0 in older rows))``
* ``verdicts(campaign, pipeline, verdict, n)``
* ``findings(campaign, finding, pipeline, verdict, check_name, new INT)``: ``new`` 1 when the
  finding filed an entry new to the corpus that is not a known upstream bug and was blamed
  (as the console counts new; rows written before 2026-12-04 counted known upstream bugs
  too, and before 2026-12-05 findings written unblamed when the time budget was spent)
* ``stages(campaign, stage, seconds REAL)``: worker seconds per stage
  (:mod:`aliasfuzz.campaign.costs`; none for campaigns run before stages were counted)

Times are Unix seconds. Each campaign's rows are replaced as a whole (idempotent on resume).
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from aliasfuzz.campaign.journal import finding_entries, new_root

__all__ = ["History"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS campaigns (
  id TEXT PRIMARY KEY, started REAL, finished REAL, seed INTEGER, device TEXT,
  pipelines TEXT, budget TEXT, programs INTEGER, tasks INTEGER, seconds REAL,
  throughput REAL, status TEXT, versions TEXT, internal_errors INTEGER DEFAULT 0);
CREATE TABLE IF NOT EXISTS verdicts (
  campaign TEXT, pipeline TEXT, verdict TEXT, n INTEGER);
CREATE TABLE IF NOT EXISTS findings (
  campaign TEXT, finding TEXT, pipeline TEXT, verdict TEXT, check_name TEXT, new INTEGER);
CREATE TABLE IF NOT EXISTS stages (campaign TEXT, stage TEXT, seconds REAL);
"""


class History:
    """The history database at ``path`` (created on first use)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as db, db:
            db.executescript(_SCHEMA)
            have = {r["name"] for r in db.execute("PRAGMA table_info(campaigns)")}
            if "internal_errors" not in have:  # a history written before the column
                db.execute("ALTER TABLE campaigns ADD COLUMN internal_errors INTEGER DEFAULT 0")

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30)
        db.row_factory = sqlite3.Row
        return db

    def record(
        self,
        row: dict[str, Any],
        verdicts: dict[tuple[str, str], int],
        findings: list[dict[str, Any]],
        stages: dict[str, float] | None = None,
    ) -> None:
        """Insert or replace campaign ``row["id"]`` with its verdict counts, findings and
        seconds per stage.

        ``verdicts`` maps ``(pipeline, verdict)`` to a count; each finding has ``id``,
        ``pipeline``, ``verdict``, ``check`` and ``new``; ``stages`` maps a stage to seconds.
        """
        cid = row["id"]
        cols = (
            "id",
            "started",
            "finished",
            "seed",
            "device",
            "pipelines",
            "budget",
            "programs",
            "tasks",
            "seconds",
            "throughput",
            "status",
            "versions",
            "internal_errors",
        )
        values = [row.get(c) for c in cols]
        values[cols.index("versions")] = json.dumps(row.get("versions", {}))
        values[cols.index("internal_errors")] = int(row.get("internal_errors") or 0)
        with closing(self._connect()) as db, db:
            db.execute(
                f"INSERT OR REPLACE INTO campaigns ({','.join(cols)}) "
                f"VALUES ({','.join('?' * len(cols))})",
                values,
            )
            db.execute("DELETE FROM verdicts WHERE campaign = ?", (cid,))
            db.execute("DELETE FROM findings WHERE campaign = ?", (cid,))
            db.execute("DELETE FROM stages WHERE campaign = ?", (cid,))
            db.executemany(
                "INSERT INTO stages VALUES (?,?,?)",
                [(cid, k, float(v)) for k, v in sorted((stages or {}).items())],
            )
            db.executemany(
                "INSERT INTO verdicts VALUES (?,?,?,?)",
                [(cid, p, v, n) for (p, v), n in sorted(verdicts.items())],
            )
            db.executemany(
                "INSERT INTO findings VALUES (?,?,?,?,?,?)",
                [
                    (
                        cid,
                        f["id"],
                        f["pipeline"],
                        f["verdict"],
                        f.get("check"),
                        # new as the console counts it (fresh user 30: the Trends
                        # table said "new 14" where the console said 6 new, 8 known)
                        int(any(new_root(f, e) for e in finding_entries(f))),
                    )
                    for f in findings
                ],
            )

    def campaigns(self) -> list[dict[str, Any]]:
        """All campaigns, oldest first, each with ``verdicts`` and ``findings`` lists."""
        with closing(self._connect()) as db:
            rows = [dict(r) for r in db.execute("SELECT * FROM campaigns ORDER BY started")]
            for r in rows:
                r["versions"] = json.loads(r["versions"] or "{}")
                r["verdicts"] = [
                    dict(v)
                    for v in db.execute(
                        "SELECT pipeline, verdict, n FROM verdicts WHERE campaign = ?", (r["id"],)
                    )
                ]
                r["costs"] = {
                    s["stage"]: s["seconds"]
                    for s in db.execute(
                        "SELECT stage, seconds FROM stages WHERE campaign = ?", (r["id"],)
                    )
                }
                r["findings"] = [
                    dict(f)
                    for f in db.execute(
                        "SELECT finding, pipeline, verdict, check_name, new FROM findings "
                        "WHERE campaign = ?",
                        (r["id"],),
                    )
                ]
        return rows

    def campaign(self, cid: str) -> dict[str, Any] | None:
        """One campaign by id, or None."""
        return next((c for c in self.campaigns() if c["id"] == cid), None)
