"""A campaign's findings by op family and by root cause (issue 15's breadth campaign).

Reads the corpus entries a campaign wrote (``--corpus``: one folder per root cause, each with
``meta.json``) and prints, with rich:

* per family (:func:`bench.coverage.family_of` over the ops of each entry's *shrunk*
  program, the ops the finding still needs): the root causes that need an op of the family,
  how many of them are new (no ``known`` upstream issue) and their sightings (hits);
* per root cause: verdict, blamed stage, known issue or ``new``, sightings, families;
* the families of the generator that no root cause needs (named, so that a campaign that
  found nothing there says so).

Only entries whose hits name ``--campaign`` (default: every entry) are counted, so that a
corpus shared by several campaigns can be split. Prints numbers; asserts nothing.

    python -m bench.findings_by_family --corpus DIR [--campaign ID] [--write FILE]
"""

from __future__ import annotations

import argparse
import io
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.coverage import FAMILY_NAMES, OP_FAMILIES, family_of


def entries(corpus: Path, campaign: str | None = None) -> list[dict[str, Any]]:
    """The ``meta.json`` of every entry of ``corpus`` (sorted by id), those with a hit of
    ``campaign`` only when it is given. Raises ``FileNotFoundError`` for a missing folder."""
    if not corpus.is_dir():
        raise FileNotFoundError(f"no corpus folder {corpus}")
    out = []
    for meta in sorted(corpus.glob("*/meta.json")):
        m = json.loads(meta.read_text())
        if campaign and not any(h.get("campaign") == campaign for h in m.get("hits") or []):
            continue
        out.append(m)
    return out


def families(meta: dict[str, Any]) -> list[str]:
    """The families of the ops an entry's shrunk program keeps (unknown ops: their name)."""
    from aliasfuzz.fuzz.ops import REGISTRY

    return sorted({family_of(op) if op in REGISTRY else op for op in meta.get("ops") or []})


def by_family(metas: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """family -> ``{"roots", "new", "hits"}`` over ``metas``."""
    table: dict[str, dict[str, int]] = defaultdict(lambda: {"roots": 0, "new": 0, "hits": 0})
    for m in metas:
        for f in families(m):
            row = table[f]
            row["roots"] += 1
            row["new"] += not m.get("known")
            row["hits"] += len(m.get("hits") or [])
    return dict(table)


def render(metas: list[dict[str, Any]], console: Console) -> None:
    """Print the family table, the root-cause table and the families with no finding."""
    fam = by_family(metas)
    t = Table(title=f"findings by family ({len(metas)} root causes)", title_justify="left")
    for c in ("family", "root causes", "new", "sightings"):
        t.add_column(c, justify="left" if c == "family" else "right")
    for name, row in sorted(fam.items(), key=lambda kv: -kv[1]["roots"]):
        t.add_row(name, str(row["roots"]), str(row["new"]), str(row["hits"]))
    console.print(t)
    r = Table(title="root causes", title_justify="left")
    for c in ("entry", "stage", "known", "sightings", "families"):
        r.add_column(c, justify="right" if c == "sightings" else "left")
    for m in metas:
        root = m.get("root") or {}
        known = (m.get("known") or {}).get("issue") or "new"
        r.add_row(m.get("id", "?"), str(root.get("stage")), known,
                  str(len(m.get("hits") or [])), ", ".join(families(m)))
    console.print(r)
    every = sorted(set(FAMILY_NAMES.values()) | set(OP_FAMILIES.values()))
    idle = [f for f in every if f not in fam]
    console.print(f"families no root cause needs ({len(idle)}): " + (", ".join(idle) or "none"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True, type=Path)
    ap.add_argument("--campaign", default=None)
    ap.add_argument("--write", default=None, help="also write the tables as plain text here")
    a = ap.parse_args(argv)
    try:
        metas = entries(a.corpus, a.campaign)
    except (FileNotFoundError, json.JSONDecodeError) as e:
        ap.exit(2, f"findings_by_family: error: {e}\n")
    render(metas, Console())
    if a.write:
        buf = io.StringIO()
        render(metas, Console(file=buf, width=160, no_color=True))
        Path(a.write).write_text(buf.getvalue())
        print(f"written {a.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
