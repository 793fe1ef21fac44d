"""Issue 16, a lever measured and not adopted: back off shrinking a *family* of findings.

A campaign shrinks one finding per coarse key (``driver._Campaign._prekey``: pipeline,
verdict, check, decision kinds, op kinds and the program's op names). Most shrinks still
end on a root cause the campaign already had (campaign 45: 153 of 193 shrunk findings, 440
of 741 shrink+blame seconds). This replays campaign journals offline: per family (the
prekey's first ``--family`` fields), after ``s`` shrinks in a row that found no new root
cause, the next ``2**s - 1`` findings of the family are skipped. It prints, per journal,
the findings, those skipped, the shrink+blame seconds and those saved, and the root causes
the skipping would have lost (ids the journal's campaign filed only from skipped findings).

    python bench/shrink_backoff.py /work/camp4*/st*/runs/*/journal.jsonl --family 5 --family 4
"""

from __future__ import annotations

import argparse
import collections
import json


def simulate(journal: str, family: int) -> tuple[int, int, float, float, list[str]]:
    """``(findings, skipped, seconds, saved, lost ids)`` of one journal under the back-off."""
    events = []
    with open(journal) as f:
        for line in f:
            d = json.loads(line)
            if d.get("t") == "finding" and not d.get("duplicate") and d.get("prekey"):
                c = d.get("costs") or {}
                spent = sum(c.get(k, 0.0) for k in ("shrink", "blame", "known_first"))
                key = tuple(json.dumps(x) for x in d["prekey"])[:family]
                events.append((d["i"], d["pipeline"], key, d.get("ids") or [], spent))
    events.sort(key=lambda e: (e[0], e[1]))  # arrival order, roughly
    seen: set[str] = set()
    state: dict[tuple, list[int]] = collections.defaultdict(lambda: [0, 0])
    skipped, total, saved = 0, 0.0, 0.0
    for _, _, key, ids, spent in events:
        total += spent
        st = state[key]
        if st[1] < 2 ** st[0] - 1:
            st[1] += 1
            skipped += 1
            saved += spent
            continue
        st[1] = 0
        new = not ids or any(x not in seen for x in ids)
        seen.update(ids)
        st[0] = 0 if new else st[0] + 1
    every = {x for e in events for x in e[3]}
    return len(events), skipped, total, saved, sorted(every - seen)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("journals", nargs="+")
    ap.add_argument("--family", type=int, action="append", default=None,
                    help="prekey fields that make a family (5: all but the op names)")
    args = ap.parse_args()
    for journal in args.journals:
        for family in args.family or [5]:
            n, skipped, total, saved, lost = simulate(journal, family)
            print(f"{journal} family={family}: {n} shrunk findings, {skipped} skipped, "
                  f"{total:.0f} s shrink+blame, {saved:.0f} s saved "
                  f"({100 * saved / max(total, 1e-9):.0f} %), lost {len(lost)}: {lost}")


if __name__ == "__main__":
    main()
