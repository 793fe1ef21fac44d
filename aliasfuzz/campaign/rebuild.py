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
program index). This is how ``corpus/`` moved to one entry per root cause; it is also what
to run after an oracle change that changes what the tool reports.

One line per entry: ``<entry>: <verdict>/<check> -> <new entry ids>`` (each followed by
``(known <issue>)`` when its root cause is a known upstream bug) or ``<entry>: dropped
(<why>)``. Exit status 0, or 2 for a path that is not an entry or corpus folder.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from aliasfuzz.campaign.corpus import load_entry, record
from aliasfuzz.campaign.driver import confirmed_roots, dismissal
from aliasfuzz.campaign.known import check_controls, load_known
from aliasfuzz.campaign.pool import blame_in
from aliasfuzz.campaign.replay import entries_of
from aliasfuzz.campaign.shrink import shrink
from aliasfuzz.campaign.worker import Worker
from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ir import Program
from aliasfuzz.oracle.verdict import Verdict

__all__ = ["main", "rebuild"]

_PROVENANCE = ("campaign", "seed", "program_index", "device", "pipeline_options")


def _task(program: Program, pipeline: str, device: str, options: dict[str, Any]) -> dict[str, Any]:
    return {"program": program.to_json(), "pipeline": pipeline, "device": device, "options": options}


def _one(worker: Worker, path: Path, corpus: Path, bugs: list, budget: int) -> str:
    try:
        entry = load_entry(path)
    except InvalidArgument as e:
        return f"dropped (does not load: {e})"
    meta = entry.meta
    pipeline, device = meta["expected"]["pipeline"], meta.get("device", "cpu")
    options = meta.get("pipeline_options", {})
    try:
        entry.program.validate()
    except InvalidArgument as e:
        return f"dropped (validation: {e})"
    out = worker.run(_task(entry.program, pipeline, device, options))
    if "internal_error" in out:
        return f"dropped (internal error: {out['internal_error'].strip().splitlines()[-1]})"
    if not Verdict(out["verdict"]).is_finding:
        return f"dropped (now {out['verdict']}/{out.get('check')}: {out.get('explanation', '')[:120]})"

    def evaluate(p: Program) -> dict[str, Any]:
        return worker.run(_task(p, pipeline, device, options))

    small, sout, spent = shrink(entry.program, out, evaluate, budget)
    blame = blame_in(worker, _task(small, pipeline, device, options), sout, bugs).get("blame") or {
        "stage": None, "stages": [], "trail": [], "reason": "cutting the pipeline failed"}
    dismissed = dismissal(sout, pipeline, blame)
    if dismissed is not None:  # as the campaign does: never written
        return f"dropped ({dismissed.kind}: {dismissed.why})"
    blame = confirmed_roots(sout, pipeline, blame)
    provenance = {k: meta.get(k) for k in _PROVENANCE}
    provenance["shrink_executions"] = spent
    found = record(corpus, entry.program, small, sout, pipeline, blame, bugs, provenance)
    # each entry with its own known bug: a finding's second root need not be the first's
    ids = ", ".join(p.name + (f" (known {k})" if k else "")
                    for p, k in zip(found.paths, found.knowns, strict=True))
    return f"{sout['verdict']}/{sout.get('check')} -> {ids}"


def rebuild(paths: list[str], corpus: Path, *, budget: int = 40, timeout: float = 300.0) -> int:
    """Re-judge every entry under ``paths`` into ``corpus`` (see the module docstring)."""
    entries = entries_of(paths)
    bugs = load_known(corpus)
    check_controls(bugs)  # a control naming an option torch lacks: before any work
    with tempfile.TemporaryDirectory(prefix="aliasfuzz-rebuild-") as tmp:
        worker = Worker(Path(tmp), timeout=timeout, recycle=50)
        try:
            for path in entries:
                print(f"{path.name}: {_one(worker, path, corpus, bugs, budget)}", flush=True)
        finally:
            worker.close()
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
