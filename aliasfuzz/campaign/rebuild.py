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
(<why>)``. Exit status 0, or 2 for a path that is not an entry or corpus folder.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from aliasfuzz.campaign.corpus import CorpusEntry, _body, hit_program, load_entry, record
from aliasfuzz.campaign.driver import confirmed_roots, dismissal
from aliasfuzz.campaign.known import check_controls, load_known
from aliasfuzz.campaign.pool import blame_in
from aliasfuzz.campaign.replay import entries_of
from aliasfuzz.campaign.shrink import shrink
from aliasfuzz.campaign.worker import Worker
from aliasfuzz.errors import InvalidArgument
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


def _one(worker: Worker, program: Program | None, pipeline: str,
         provenance: dict[str, Any], corpus: Path, bugs: list, budget: int) -> tuple[str, list[str]]:
    if program is None:
        return "dropped (no program: its program_of reference names no hit with one)", []
    device = provenance.get("device") or "cpu"
    options = provenance.get("pipeline_options") or {}
    try:
        program.validate()
    except InvalidArgument as e:
        return f"dropped (validation: {e})", []
    out = worker.run(_task(program, pipeline, device, options))
    if "internal_error" in out:
        return f"dropped (internal error: {out['internal_error'].strip().splitlines()[-1]})", []
    if not Verdict(out["verdict"]).is_finding:
        return f"dropped (now {out['verdict']}/{out.get('check')}: {out.get('explanation', '')[:120]})", []

    def evaluate(p: Program) -> dict[str, Any]:
        return worker.run(_task(p, pipeline, device, options))

    small, sout, spent = shrink(program, out, evaluate, budget)
    blame = blame_in(worker, _task(small, pipeline, device, options), sout, bugs).get("blame") or {
        "stage": None, "stages": [], "trail": [], "reason": "cutting the pipeline failed"}
    dismissed = dismissal(sout, pipeline, blame)
    if dismissed is not None:  # as the campaign does: never written
        return f"dropped ({dismissed.kind}: {dismissed.why})", []
    blame = confirmed_roots(sout, pipeline, blame)
    provenance = {**provenance, "shrink_executions": spent}
    found = record(corpus, program, small, sout, pipeline, blame, bugs, provenance)
    # each entry with its own known bug: a finding's second root need not be the first's
    ids = ", ".join(p.name + (f" (known {k})" if k else "")
                    for p, k in zip(found.paths, found.knowns, strict=True))
    return f"{sout['verdict']}/{sout.get('check')} -> {ids}", [p.name for p in found.paths]


def rebuilt(paths: list[str], corpus: Path, *, budget: int = 40,
            timeout: float = 300.0) -> Iterator[tuple[str, str, list[str]]]:
    """Re-judge every sighting of every entry under ``paths`` into ``corpus`` (see the
    module docstring), yielding ``(sighting, what happened, ids of the entries it was
    recorded in)`` one by one: ``sighting`` is ``<entry>`` or ``<entry> hit <k>
    (<pipeline>)``, the ids are empty for a sighting dropped. Raises
    :class:`~aliasfuzz.errors.InvalidArgument` for a path that is not an entry or corpus
    folder, or a control that names an option torch lacks, before any work."""
    entries = entries_of(paths)
    bugs = load_known(corpus)
    check_controls(bugs)
    with tempfile.TemporaryDirectory(prefix="aliasfuzz-rebuild-") as tmp:
        worker = Worker(Path(tmp), timeout=timeout, recycle=50)
        try:
            for path in entries:
                try:
                    entry = load_entry(path)
                except InvalidArgument as e:
                    yield path.name, f"dropped (does not load: {e})", []
                    continue
                for label, program, pipeline, provenance in _sightings(entry):
                    said, ids = _one(worker, program, pipeline, provenance, corpus, bugs, budget)
                    yield f"{path.name}{label}", said, ids
        finally:
            worker.close()


def rebuild(paths: list[str], corpus: Path, *, budget: int = 40, timeout: float = 300.0) -> int:
    """:func:`rebuilt`, one line per sighting on stdout; returns the exit status, 0."""
    for sighting, said, _ids in rebuilt(paths, corpus, budget=budget, timeout=timeout):
        print(f"{sighting}: {said}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m aliasfuzz.campaign.rebuild",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", help="entry folders or corpus folders to re-judge")
    ap.add_argument("--corpus", required=True, help="the corpus to write root causes into")
    ap.add_argument("--shrink-budget", type=int, default=40)
    args = ap.parse_args(argv)
    try:
        return rebuild(args.paths, Path(args.corpus), budget=args.shrink_budget)
    except InvalidArgument as e:
        print(f"aliasfuzz rebuild: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
