"""How many corpus entries one-entry-per-bug merges, on stored keys (no re-judging).

``python bench/root_merge.py CORPUS [CORPUS ...]`` files each corpus's entries, in name
order, as :func:`aliasfuzz.campaign.corpus.record` would (:func:`aliasfuzz.campaign.
rootclass.find_same` on each entry's stored ``root``, ``trail`` and ``ops``) and prints
``<corpus>: <entries> entries -> <groups>``, then every merged group with each member's
check, evidence, ops and the normalized error of its blamed stage, for reading. Entries
without a ``root`` (meta version 1) are left out. Trails are those the entry was blamed
with; a rebuild (``python -m aliasfuzz.campaign.rebuild``) re-blames first.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from aliasfuzz.campaign.corpus import list_entries
from aliasfuzz.campaign.rootclass import _stage_error, find_same


def main(corpora: list[str]) -> None:
    for c in corpora:
        ents = [(p, json.loads((p / "meta.json").read_text())) for p in list_entries(c)
                if (p / "meta.json").exists()]
        ents = [(p, m) for p, m in ents if isinstance(m.get("root"), dict)]
        firsts: list[tuple[Path, dict]] = []
        groups: dict[Path, list[tuple[Path, dict]]] = {}
        for p, m in ents:
            same = find_same(firsts, m)
            if same is None:
                firsts.append((p, m))
                groups[p] = [(p, m)]
            else:
                groups[same].append((p, m))
        print(f"{c}: {len(ents)} entries -> {len(groups)}")
        for members in groups.values():
            if len(members) > 1:
                print("  MERGED:", [p.name for p, _ in members])
                for p, m in members:
                    print("     ", p.name, m["root"]["check"], m["root"]["evidence"], m.get("ops"),
                          _stage_error(m))


if __name__ == "__main__":
    main(sys.argv[1:])
