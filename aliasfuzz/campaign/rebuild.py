"""Re-judge corpus entries with the current oracle and write them into a corpus as root causes.

``python -m aliasfuzz.campaign.rebuild OLD [OLD ...] --corpus NEW`` takes entry folders (or
corpus folders of entries, any ``meta_version``) and, for each, runs its program on its
recorded pipeline in a :class:`~aliasfuzz.campaign.worker.Worker` exactly as a campaign
would: a program that is no longer a finding (now rejected by validation, judged ok or a
documented refusal) is reported and left out, and so is one the campaign would not write
(:func:`aliasfuzz.campaign.driver.dismissal`: a replay that does not show it, a signal
death no cut reproduces, a fast-path finding full ``torch.compile`` does not show or cannot
run here); a finding is shrunk with the current shrinker, blamed stage by stage and recorded under its root causes
(:func:`aliasfuzz.campaign.corpus.record`), keeping the entry's provenance (campaign, seed,
program index). Every other sighting in the entry's ``hits`` (its own program and pipeline,
:func:`aliasfuzz.campaign.corpus.hit_program`) is re-judged the same way, so that a rebuild
loses no sighting and each lands under the root cause the current code gives it (a rebuild
that re-judged only the first sighting lost 13 of the repository corpus' 36 hits). This
is how ``corpus/`` moved to one entry per root cause; it is also what to run after an oracle
change that changes what the tool reports.

One line per sighting: ``<entry>: <verdict>/<check> -> <new entry ids>`` for the entry's
own program and ``<entry> hit <k> (<pipeline>): ...`` for each other hit (each id followed
by ``(known <issue>)`` when its root cause is a known upstream bug), or ``...: dropped
(<why>)``; an entry whose finding this host cannot run (a user Triton kernel under full
Inductor on a CPU machine) is copied over as it is (``kept ...``); last, a ``rebuilt:`` line
with the counts. Exit status 0, or 2 (one line, before any work) for a path that is not an
entry or corpus folder, an entry that does not load, a ``--corpus`` that is a file or a
negative ``--shrink-budget``. A rebuild killed midway leaves a partial corpus: run the same
command again (a sighting already recorded is not added twice) or start from an empty one.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from aliasfuzz.campaign.corpus import CorpusEntry, _body, hit_program, load_entry, record
from aliasfuzz.campaign.driver import confirmed_roots, dismissal
from aliasfuzz.campaign.known import check_controls, load_known
from aliasfuzz.campaign.options import check_writable_dir
from aliasfuzz.campaign.pool import blame_in
from aliasfuzz.campaign.replay import entries_of
from aliasfuzz.campaign.shrink import shrink
from aliasfuzz.campaign.worker import Worker
from aliasfuzz.errors import InvalidArgument, clip
from aliasfuzz.fuzz.ir import Program
from aliasfuzz.oracle.verdict import Verdict

__all__ = ["main", "rebuild", "rebuilt"]

_PROVENANCE = ("campaign", "seed", "program_index", "device", "pipeline_options")


def _task(program: Program, pipeline: str, device: str, options: dict[str, Any]) -> dict[str, Any]:
    return {"program": program.to_json(), "pipeline": pipeline, "device": device, "options": options}


def _sightings(entry: CorpusEntry) -> list[tuple[str, Program | None, str, dict[str, Any]]]:
    """``(label, program, pipeline, provenance)`` per sighting of ``entry``: its own program
    under ``expected``'s pipeline first, then every hit that is another program, pipeline
    or campaign program (a hit that is the entry's own first sighting is not repeated); the
    program is None for a hit whose ``program_of`` reference is broken."""
    meta = entry.meta
    own = {k: meta.get(k) for k in _PROVENANCE}
    out = [("", entry.program, meta["expected"]["pipeline"], own)]
    mine = entry.program.to_json()
    hits = meta.get("hits") or []
    for k, hit in enumerate(hits):
        program = hit_program(hit, mine, hits)
        label = f" hit {k} ({hit.get('pipeline')})"
        if program is None:  # said, not skipped: a hand merge left 5fcbc5cdc0's hit 2 so
            out.append((label, None, str(hit.get("pipeline")), {}))
            continue
        where = {"campaign": hit.get("campaign"), "seed": hit.get("seed"),
                 "program_index": hit.get("program_index"), "device": own["device"],
                 "pipeline_options": hit.get("pipeline_options") or {}}
        if (hit.get("pipeline") == out[0][2] and _body(program) == _body(mine)
                and all(where[f] == own[f] for f in ("campaign", "program_index"))):
            continue
        out.append((label, Program.from_json(program), str(hit.get("pipeline")), where))
    return out


def _one(worker: Worker, program: Program | None, pipeline: str, provenance: dict[str, Any],
         corpus: Path, bugs: list, budget: int) -> tuple[str, list[str], bool]:
    """``(what happened, ids recorded in, whether this host cannot run the finding)``."""
    if program is None:
        return "dropped (no program: its program_of reference names no hit with one)", [], False
    device = provenance.get("device") or "cpu"
    options = provenance.get("pipeline_options") or {}
    try:
        program.validate()
    except InvalidArgument as e:
        return f"dropped (validation: {e})", [], False
    out = worker.run(_task(program, pipeline, device, options))
    if "internal_error" in out:
        return f"dropped (internal error: {out['internal_error'].strip().splitlines()[-1]})", [], False
    if not Verdict(out["verdict"]).is_finding:
        now = clip(str(out.get("explanation", "")), 120)
        return f"dropped (now {out['verdict']}/{out.get('check')}: {now})", [], False

    def evaluate(p: Program) -> dict[str, Any]:
        return worker.run(_task(p, pipeline, device, options))

    small, sout, spent = shrink(program, out, evaluate, budget)
    blame = blame_in(worker, _task(small, pipeline, device, options), sout, bugs).get("blame") or {
        "stage": None, "stages": [], "trail": [], "reason": "cutting the pipeline failed"}
    dismissed = dismissal(sout, pipeline, blame)
    if dismissed is not None:  # as the campaign does: never written
        return (f"dropped ({dismissed.kind}: {dismissed.why})", [],
                dismissed.cause == "fast-path-unsupported")
    blame = confirmed_roots(sout, pipeline, blame)
    provenance = {**provenance, "shrink_executions": spent}
    found = record(corpus, program, small, sout, pipeline, blame, bugs, provenance)
    # each entry with its own known bug: a finding's second root need not be the first's
    ids = ", ".join(p.name + (f" (known {k})" if k else "")
                    for p, k in zip(found.paths, found.knowns, strict=True))
    return f"{sout['verdict']}/{sout.get('check')} -> {ids}", [p.name for p in found.paths], False


def _keep(entry: CorpusEntry, corpus: Path) -> str:
    """Copy ``entry`` into ``corpus`` as it is: this host cannot run its finding (a user
    Triton kernel under full Inductor on a CPU machine), so rebuilding it here would drop a
    bug found on a GPU (fresh user 49's B3: the README's recipe lost
    ``miscompile-reinplace-3ec1525bd5``)."""
    dest = Path(corpus) / entry.id
    if dest.exists():
        return f"kept: this host cannot run it, and {dest} is there already"
    shutil.copytree(entry.path, dest, ignore=shutil.ignore_patterns(".*"))
    return f"kept as it is in {dest} (this host cannot run it: rebuild it where it was found)"


def rebuilt(paths: list[str], corpus: Path, *, budget: int = 40,
            timeout: float = 300.0) -> Iterator[tuple[str, str, list[str]]]:
    """Re-judge every sighting of every entry under ``paths`` into ``corpus`` (see the
    module docstring), yielding ``(sighting, what happened, ids of the entries it was
    recorded in)`` one by one: ``sighting`` is ``<entry>`` or ``<entry> hit <k>
    (<pipeline>)``, the ids are empty for a sighting dropped. An entry whose own finding
    this host cannot run is copied into ``corpus`` as it is (:func:`_keep`; its id is
    yielded). Raises :class:`~aliasfuzz.errors.InvalidArgument`, before any work, for a path
    that is not an entry or corpus folder, an entry that does not load (a rebuild that
    went on without it would leave it out of the new corpus: fresh user 49's B2), a
    ``corpus`` that cannot be a writable folder (:func:`check_writable_dir`), or a
    control that names an option torch lacks."""
    check_writable_dir(corpus, "--corpus")  # a file, or a folder that cannot be written
    if budget < 0:
        raise InvalidArgument(f"--shrink-budget {budget}: must be 0 or more executions")
    entries = [load_entry(p) for p in entries_of(paths)]  # each raises with its path
    bugs = load_known(corpus)
    check_controls(bugs)
    Path(corpus).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="aliasfuzz-rebuild-") as tmp:
        worker = Worker(Path(tmp), timeout=timeout, recycle=50)
        try:
            for entry in entries:
                for k, (label, program, pipeline, provenance) in enumerate(_sightings(entry)):
                    said, ids, elsewhere = _one(worker, program, pipeline, provenance, corpus,
                                                bugs, budget)
                    if elsewhere and k == 0:
                        said, ids = f"{said}; {_keep(entry, corpus)}", [entry.id]
                    yield f"{entry.id}{label}", said, ids
        finally:
            worker.close()


def rebuild(paths: list[str], corpus: Path, *, budget: int = 40, timeout: float = 300.0) -> int:
    """:func:`rebuilt`, one line per sighting on stdout, then a summary line; returns the
    exit status, 0 (a path that does not load raises before any work)."""
    rows = 0
    dropped = 0
    into: set[str] = set()
    for sighting, said, ids in rebuilt(paths, corpus, budget=budget, timeout=timeout):
        print(f"{sighting}: {said}", flush=True)
        rows += 1
        dropped += not ids
        into.update(ids)
    # a rebuild killed before this line left a partial corpus: run the same command again
    # (each sighting is recorded once) or start from an empty --corpus
    print(f"rebuilt: {rows} sightings, {rows - dropped} recorded in {len(into)} entries of "
          f"{corpus}, {dropped} dropped", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m aliasfuzz.campaign.rebuild",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", help="entry folders or corpus folders to re-judge")
    ap.add_argument("--corpus", required=True,
                    help="the corpus to write root causes into (created when missing; an "
                         "empty one, or this command's own earlier output)")
    ap.add_argument("--shrink-budget", type=int, default=40,
                    help="executions the shrinker may spend per sighting (40)")
    args = ap.parse_args(argv)
    try:
        return rebuild(args.paths, Path(args.corpus), budget=args.shrink_budget)
    except InvalidArgument as e:  # the prefix every aliasfuzz command's one-line error has
        print(f"aliasfuzz: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
