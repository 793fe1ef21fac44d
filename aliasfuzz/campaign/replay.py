"""``aliasfuzz replay``: re-run corpus entries in an isolated worker and compare verdicts.

Each entry is loaded from JSON (no code runs), then its program runs through the
pipeline recorded in ``meta.json`` in a :class:`~aliasfuzz.campaign.worker.Worker`, so an
entry that crashes torch is replayed like any other. Status per entry:

* ``reproduces``: same verdict and failed check as recorded;
* ``fixed``: the verdict is now ``ok``;
* ``changed``: another verdict or check (printed);
* ``corrupt``: the entry does not load, or names a pipeline, options or device that
  cannot run here (reported with a one-line reason, skipped; the others still run).

Exit status: 0 when every entry reproduces or is fixed, 1 when one changed, 2 when one is
corrupt or a path does not exist.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aliasfuzz.campaign.corpus import CorpusEntry, list_entries, load_entry
from aliasfuzz.campaign.options import check_device, pipeline_options
from aliasfuzz.campaign.worker import Worker
from aliasfuzz.errors import InvalidArgument, clip, not_a_folder

__all__ = ["ReplayRow", "entries_of", "print_rows", "replay", "replay_rows", "replay_task",
           "repro_problem"]


@dataclass(frozen=True)
class ReplayRow:
    """One line of the replay table."""

    entry: str
    status: str
    expected: str
    got: str
    detail: str = ""
    #: the entry's ``repro.py`` needs a GPU this host lacks (it exits 3 here): the row is the
    #: harness's verdict alone (fresh user 33: "reproduces" beside a repro that cannot run)
    repro_needs_gpu: bool = False
    #: what is wrong with the entry's ``repro.py`` (missing, not valid Python), else "": the
    #: row is the harness's verdict, the repro being the entry's deliverable for an upstream
    #: report (fresh user 39's B10: a deleted or broken repro.py replayed "reproduces")
    repro_problem: str = ""


def repro_problem(folder: Path) -> str:
    """Why ``folder``'s ``repro.py`` cannot be run as it is ("missing", "not valid Python:
    ..."), or "" when it compiles."""
    path = folder / "repro.py"
    try:
        compile(path.read_text(), str(path), "exec")
    except FileNotFoundError:
        return "missing"
    except (OSError, UnicodeDecodeError) as e:
        return f"unreadable: {e}"
    except (SyntaxError, ValueError) as e:
        return f"not valid Python: {type(e).__name__}: {e}"
    return ""


def _repro_needs_gpu(entry: CorpusEntry) -> bool:
    """Whether ``entry``'s ``repro.py`` needs a GPU that this host does not have."""
    import torch

    from aliasfuzz.campaign.repro import plan

    return plan(entry.program, entry.meta).cuda and not torch.cuda.is_available()


def entries_of(paths: list[str]) -> list[Path]:
    """Entry folders named by ``paths`` (an entry folder, or a corpus folder of entries)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if not p.is_dir():
            raise InvalidArgument(not_a_folder(p))
        if (p / "meta.json").exists() or (p / "program.json").exists():
            out.append(p)
        else:
            found = list_entries(p)
            if not found:  # a mistyped path must not pass as an empty corpus
                # corpus/README.md's words: a folder with either file is an entry (one
                # without the other is a corrupt one) (fresh user 39's B15 read "and")
                raise InvalidArgument(f"{p}: no corpus entries (an entry is a folder holding "
                                      "a meta.json or a program.json)")
            out.extend(found)
    return out


def replay_task(entry: CorpusEntry) -> dict[str, Any]:
    """The worker task that replays ``entry``, checked before it is run.

    Raises :class:`InvalidArgument` (one line naming the entry's meta.json) when the entry
    is valid JSON but cannot run: an unknown ``expected.pipeline``, ``pipeline_options``
    that do not build a :class:`~aliasfuzz.passes.pipelines.PipelineOptions`, or a device
    that is not cpu / an available cuda. Replay reports such an entry as ``corrupt``.
    """
    from aliasfuzz.campaign import _judge

    meta, where = entry.meta, entry.path / "meta.json"
    pipeline = meta["expected"]["pipeline"]
    try:
        if pipeline not in _judge.pipeline_names():
            raise InvalidArgument(f"unknown pipeline {pipeline!r} in expected.pipeline")
        options = meta.get("pipeline_options", {})
        pipeline_options(options, "pipeline_options")
        device = meta.get("device", "cpu")
        check_device(device)
    except InvalidArgument as e:
        raise InvalidArgument(f"{where}: {e}") from None
    return {
        "program": entry.program.to_json(),
        "pipeline": pipeline,
        "device": device,
        "options": options,
    }


def replay_rows(paths: list[str], *, timeout: float = 120.0) -> list[ReplayRow]:
    """Replay every entry under ``paths``; one :class:`ReplayRow` each, in order."""
    rows: list[ReplayRow] = []
    # the worker's caches and log live only as long as the replay
    tmp = tempfile.TemporaryDirectory(prefix="aliasfuzz-replay-")
    worker = Worker(Path(tmp.name), timeout=timeout, recycle=50)
    try:
        for path in entries_of(paths):
            try:
                entry = load_entry(path)
                task = replay_task(entry)
            except InvalidArgument as e:
                rows.append(ReplayRow(path.name, "corrupt", "?", "?", str(e)))
                continue
            exp = entry.meta["expected"]
            out = worker.run(task)
            if "internal_error" in out:
                raise RuntimeError(
                    f"replay of {path} hit an internal error:\n{out['internal_error']}"
                )
            want = f"{exp['verdict']}/{exp.get('check')}"
            got = f"{out['verdict']}/{out.get('check')}"
            if got == want:
                status = "reproduces"
            elif out["verdict"] == "ok":
                status = "fixed"
            else:
                status = "changed"
            rows.append(ReplayRow(entry.id, status, want, got, clip(str(out.get("explanation", "")), 120),
                                  _repro_needs_gpu(entry), repro_problem(path)))
    finally:
        worker.close()
        tmp.cleanup()
    return rows


def replay(paths: list[str], *, timeout: float = 120.0) -> int:
    """Print the replay table for ``paths``; return the exit status documented above."""
    return print_rows(replay_rows(paths, timeout=timeout))


def print_rows(rows: list[ReplayRow]) -> int:
    """Print the replay table of ``rows``; return the exit status documented above."""
    width = max([len(r.entry) for r in rows] + [5])
    print(f"{'entry':<{width}}  {'status':<10}  {'expected':<28}  now")
    for r in rows:
        print(f"{r.entry:<{width}}  {r.status:<10}  {r.expected:<28}  {r.got}")
        if r.status == "changed" and r.detail:
            print(f"{'':<{width}}  {r.detail}")
    statuses = ("reproduces", "fixed", "changed", "corrupt")
    counts = {s: sum(r.status == s for r in rows) for s in statuses}
    print(", ".join(f"{n} {s}" for s, n in counts.items()))
    # a repro.py that is missing or broken is said so below, not also "needing a GPU"
    # (fresh user 53's B5)
    gpu = [r.entry for r in rows if r.repro_needs_gpu and r.status != "corrupt"
           and not r.repro_problem]
    if gpu:
        print(f"note: judged by aliasfuzz's harness only here, their repro.py needing a GPU "
              f"(exit 3 on this host): {', '.join(gpu)}")
    broken = [f"{r.entry} ({r.repro_problem})" for r in rows if r.repro_problem]
    if broken:
        print(f"note: judged by aliasfuzz's harness only, their repro.py not runnable as it is "
              f"(`python -m aliasfuzz.campaign.rebuild ENTRY --corpus NEW` writes the entry "
              f"again): {'; '.join(broken)}")
    for r in rows:  # one line each on stderr, after the table: what to fix, and where
        if r.status == "corrupt":
            print(f"aliasfuzz: error: corrupt entry {r.entry}: {r.detail or 'does not load'}",
                  file=sys.stderr)
    if counts["corrupt"]:
        return 2
    return 1 if counts["changed"] else 0
