"""The audited findings (``shared/audit/labels.tsv``) and their frozen programs (``tests/data/audit``).

The table lives in the ``shared/`` folder beside the checkout (``ALIASFUZZ_AUDIT`` names
the ``labels.tsv`` file elsewhere, e.g. on the GPU machine where only the checkout
travels). Without it the tests that read the table skip locally; under CI (``CI`` set)
its absence is an error, as for the seed cases (:mod:`tests.common.cases`).

Each row's program is frozen in ``tests/data/audit/<entry>.json`` (format:
``tests/data/audit/README.md``), so the table can be iterated after ``corpus/`` is
re-judged and its entries removed or merged.
"""

from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aliasfuzz.fuzz.ir import Program

__all__ = ["AUDIT", "DATA", "AuditRow", "data_paths", "program_of", "record_of", "rows"]

ROOT = Path(__file__).resolve().parents[2]
AUDIT = Path(os.environ.get("ALIASFUZZ_AUDIT", ROOT.parent / "shared" / "audit" / "labels.tsv"))
DATA = ROOT / "tests" / "data" / "audit"

_COLUMNS = ["entry", "pipeline", "label", "stage", "root"]
_LABELS = ("genuine", "false-positive")

if os.environ.get("CI") and not AUDIT.is_file():
    raise RuntimeError(f"CI run without the audit table: {AUDIT} does not exist")


@dataclass(frozen=True)
class AuditRow:
    """One audited finding: ``label`` is ``genuine`` or ``false-positive``; ``stage`` the
    first pipeline stage that departs from eager (``None`` for a false positive, ``-`` in
    the table); ``roots`` the root-cause names (one, or several comma-separated)."""

    entry: str
    pipeline: str
    label: str
    stage: str | None
    roots: tuple[str, ...]

    @property
    def finding(self) -> str:
        """The verdict the entry was found with: the id's prefix (``miscompile``, ...)."""
        return self.entry.split("-" + self.pipeline + "-")[0]


def _row(d: dict[str, str], line: int) -> AuditRow:
    if d["label"] not in _LABELS:
        raise ValueError(f"{AUDIT}:{line}: label {d['label']!r} is not one of {_LABELS}")
    return AuditRow(
        entry=d["entry"],
        pipeline=d["pipeline"],
        label=d["label"],
        stage=None if d["stage"] == "-" else d["stage"],
        roots=tuple(r.strip() for r in d["root"].split(",")),
    )


def rows() -> list[AuditRow]:
    """The table's rows in file order (empty when the table is absent).

    Raises ``ValueError`` when the header is not ``entry pipeline label stage root`` or a
    label is unknown: the table's format changed and these helpers must follow it.
    """
    if not AUDIT.is_file():
        return []
    with AUDIT.open(newline="") as f:
        reader = csv.DictReader(f, delimiter="\t")
        if reader.fieldnames != _COLUMNS:
            raise ValueError(f"{AUDIT}: header {reader.fieldnames} is not {_COLUMNS}")
        return [_row(d, i) for i, d in enumerate(reader, start=2)]


def data_paths() -> list[Path]:
    """The frozen data files, sorted by name."""
    return sorted(DATA.glob("*.json"))


def record_of(entry: str) -> dict[str, Any]:
    """The parsed ``tests/data/audit/<entry>.json`` (``FileNotFoundError`` if missing)."""
    return json.loads((DATA / f"{entry}.json").read_text())


def program_of(entry: str) -> Program:
    """The program of audited finding ``entry`` (``InvalidArgument`` if malformed)."""
    return Program.from_json(record_of(entry)["program"])
