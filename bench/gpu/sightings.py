"""Sightings a campaign added to a corpus, by how their program was drawn (issue 15).

``python bench/gpu/sightings.py CORPUS [BASE]``: for every entry of CORPUS, its sightings
(``meta.json`` ``hits``; an entry's first sighting is its ``program.json``) that BASE (the
corpus the campaign started from) does not hold, counted by the generator of the sighting's
program (``meta.generator``: ``strategies`` fresh, ``mutation`` a mutant, with the source
kind: ``entry`` or ``seeds``), and the entries that only mutants found. Prints counts.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path


def _kind(meta: dict) -> str:
    if meta.get("generator") != "mutation":
        return "fresh"
    return "mutant of " + ("a seed" if str(meta.get("mutated_from", "")).startswith("seeds/") else "an entry")


def main(argv: list[str]) -> int:
    corpus = Path(argv[0])
    base = Path(argv[1]) if len(argv) > 1 else None
    by, only_mutants = Counter(), []
    for m in sorted(corpus.glob("*/meta.json")):
        meta = json.loads(m.read_text())
        old = base / m.parent.name / "meta.json" if base else None
        had = len(json.loads(old.read_text()).get("hits") or []) if old and old.exists() else 0
        hits = (meta.get("hits") or [])[had:]
        first = json.loads((m.parent / "program.json").read_text()).get("meta") or {}
        kinds = []
        for h in hits:
            prog = h.get("program")
            pm = (prog.get("meta") or {}) if isinstance(prog, dict) else first
            kinds.append(_kind(pm))
        by.update(kinds)
        if kinds and all(k != "fresh" for k in kinds) and not had:
            only_mutants.append(m.parent.name)
    print("sightings added, by how the program was drawn:", dict(by))
    print(f"entries only mutants found ({len(only_mutants)}):", " ".join(only_mutants))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
