"""The campaign journal: an append-only JSON-lines log that makes ``--resume`` lossless.

``<state>/runs/<campaign>/journal.jsonl`` gets one event per line, flushed and fsync'ed
before the driver moves on:

* ``{"t": "task", "i": <program index>, "pipeline": ..., "outcome": {...}, "op_kinds": [...]}``;
  a task that crashed or timed out is written once its re-run in a fresh worker has
  answered, with the re-run's outcome (and the first run under ``outcome.first`` when the
  two differ: a flaky crash, e.g. a worker killed from outside);
* ``{"t": "finding", "i": ..., "pipeline": ..., "id": <corpus id> | null, "ids": [...],
  "news": [bool, ...], "knowns": [<issue> | null, ...], "new": bool, ...}`` once the
  finding is shrunk and its corpus entries are on disk (``id`` null: a duplicate, or
  dismissed and not written). ``ids`` are the entries it filed, one per root cause in
  blame order (``id`` is the first); ``news`` and ``knowns`` say of each of them whether
  it was new to the corpus and which known upstream bug it matches, and ``new`` whether
  any was new. Read them with :func:`finding_entries`: events written before ``news``
  and ``knowns`` existed carry one ``new`` and one ``known`` for all the entries;
* ``{"t": "end", "status": "done", "flaky": <tasks whose crash or timeout did not recur>,
  "unreproduced": <findings whose replay or cut did not show them again>}``. A ``finding``
  event of such a finding has ``id`` null, ``dismissed`` (why, words for a person),
  ``dismissed_kind`` (``flaky`` or ``harness-only``), ``dismissed_cause`` (``replay``,
  ``fresh``, ``death``, ``fast-path-hidden`` or ``fast-path-unsupported``) and
  ``dismissed_verdict`` (the finding's verdict): ``driver.Dismissal``. Counts read the
  cause and verdict (:func:`dismissed_cause`), not the words.

A task whose outcome is a finding but has no ``finding`` event was in flight when the
campaign died: ``--resume`` shrinks and writes it again (corpus writes are idempotent by
id). A torn last line (``kill -9`` mid-write) is ignored.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, NamedTuple

from aliasfuzz.errors import InvalidArgument

__all__ = ["Journal", "dismissed_cause", "dismissed_kind", "entry_fields", "finding_entries",
           "new_root"]


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
        """All complete events of the journal at ``path`` (a torn last line is dropped).
        Raises :class:`InvalidArgument` (one line: the file and line) for any other line that
        is not JSON."""
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
            except json.JSONDecodeError as e:
                if n >= len(lines) - 2:  # only the last line may be torn
                    break
                # fresh user 45's B2: a traceback and exit 1 for a line damaged by hand
                said = e.msg.removesuffix(' at')  # json's 'starting at' (fresh user 55's B6)
                raise InvalidArgument(f"{p}:{n + 1}: not a JSON journal event ({said} at column {e.colno}); "
                                      "only the last line of a journal may be torn") from None
        return out


class Entry(NamedTuple):
    """One corpus entry a ``finding`` event filed: its ``id``, whether it was ``new`` to
    the corpus, and the upstream issue of the known bug it matches (``known``, or None)."""

    id: str
    new: bool
    known: str | None


def dismissed_kind(event: dict[str, Any]) -> str | None:
    """``flaky`` or ``harness-only`` for a ``finding`` event of a finding the campaign did not
    write (``dismissed``, :func:`aliasfuzz.campaign.driver.dismissal`), None for any other
    event. A journal of old has no ``dismissed_kind``: harness-only reasons start with
    ``fast-path-only``."""
    if event.get("t") != "finding" or not event.get("dismissed"):
        return None
    why = str(event["dismissed"])
    return event.get("dismissed_kind") or (
        "harness-only" if why.startswith("fast-path-only ") else "flaky")


#: For a journal written before ``dismissed_cause``: the words of each ``flaky`` cause in
#: the reasons ``driver.dismissal`` then wrote, the first that matches. Those journals'
#: text is fixed, so these words need not follow any later rewording of the reasons.
_OLD_FLAKY_WORDS = (
    (" not reproduced when replayed", "replay"),
    (" not reproduced by any stage cut, nor by ", "fresh"),
    (" not reproduced by any stage cut", "death"),
)


def dismissed_cause(event: dict[str, Any]) -> tuple[str, str | None]:
    """``(cause, verdict)`` of a ``finding`` event for which :func:`dismissed_kind` is not
    None: its ``dismissed_cause`` and ``dismissed_verdict``. An event journaled before
    those fields (a campaign resumed after the upgrade) has them parsed from its reason, as
    they were counted then: a ``flaky`` one by :data:`_OLD_FLAKY_WORDS` (``other`` when
    none match), a ``harness-only`` one from its head, "fast-path-only VERDICT[,
    unconfirmed]" (``other`` and None when it has none)."""
    if event.get("dismissed_cause"):
        return str(event["dismissed_cause"]), event.get("dismissed_verdict")
    # fallback for older journals only: the reason's text is the only record of its cause
    why = str(event.get("dismissed") or "")
    if dismissed_kind(event) == "flaky":
        return next((cause for words, cause in _OLD_FLAKY_WORDS if words in why), "other"), None
    head = why.split(":", 1)[0]
    if not head.startswith("fast-path-only "):
        return "other", None
    verdict, _, unconfirmed = head.removeprefix("fast-path-only ").partition(", ")
    return ("fast-path-unsupported" if unconfirmed else "fast-path-hidden"), verdict


def finding_entries(event: dict[str, Any], before: set[str] | None = None) -> list[Entry]:
    """The entries finding ``event`` filed (:class:`Entry`, in blame order), each with its
    own status: a finding whose blame found two root causes files two entries, one of them
    maybe a known upstream bug and the other not (a fresh user saw ``known #196657`` on
    the line of an entry whose ``meta.json`` says ``"known": null``).

    ``before`` are the ids in the corpus when the campaign started (``start.json``
    ``known``): with it, whether an entry is new is decided for every event, old or new.
    An event written before ``news`` and ``knowns`` existed (the journal of a campaign
    resumed with this version) has one ``new`` and one ``known``, true of at least one of
    its entries but not necessarily of each: they are given to its entry when it filed
    only one; of several, no entry is called known (the entry's ``meta.json`` still says),
    and without ``before`` each is called what the event says (the console's reading of
    old, whose lines said it of each)."""
    ids = list(event.get("ids") or [event["id"]])
    news = event.get("news")
    if news is None:
        news = ([i not in before for i in ids] if before is not None
                else [bool(event.get("new"))] * len(ids))
    knowns = event.get("knowns")
    if knowns is None:
        # the old ``known`` named the first known root of all: only one entry's for sure
        knowns = [event.get("known") or None] if len(ids) == 1 else [None] * len(ids)
    return [Entry(i, bool(n), k or None) for i, n, k in zip(ids, news, knowns, strict=True)]


def new_root(event: dict[str, Any], entry: Entry) -> bool:
    """Whether ``entry`` (one of :func:`finding_entries` of finding ``event``) is a new root
    cause as the console's headline, the history and the report count one: new to the
    corpus, no known upstream bug, and blamed. A finding written unblamed because the time
    budget was spent (``budget_spent``) is counted apart: fresh user 40's B8 read two
    unshrunk copies of a known crash as "2 new"."""
    return entry.new and not entry.known and not event.get("budget_spent")


def entry_fields(entries: list[Entry]) -> dict[str, Any]:
    """``entries`` (:func:`finding_entries`) as a finding's fields: ``id`` (the first),
    ``ids``, each entry's ``news`` and ``knowns``, and ``new`` (any of them new)."""
    return {"id": entries[0].id, "ids": [x.id for x in entries],
            "news": [x.new for x in entries], "knowns": [x.known for x in entries],
            "new": any(x.new for x in entries)}
