"""Minimizers compared on the findings of a campaign: delta debugging vs Hypothesis.

Usage: ``python bench/shrink.py [--programs 40] [--seed 0] [--pipelines a,b] [--budget 40]
[--workers 2] [--out FILE.json] [--cache FILE.json]``.

First a campaign without shrinking (``run_campaign(shrink=False)``, default pipelines) picks
the findings the driver would shrink: one per pre-shrink signature. Then each finding is
minimized three ways, every candidate run on the finding's pipeline in an isolated
:class:`~aliasfuzz.campaign.worker.Worker`:

* ``ddmin``: the statement-deletion delta debugger the campaign used before (kept here,
  verbatim, for the comparison);
* ``hypothesis``: :func:`aliasfuzz.campaign.shrink.shrink`;
* ``hypothesis+ddmin``: ``hypothesis``, then ``ddmin`` from its result with what is left
  of the budget (does a delta-debugging pass after Hypothesis still help?).

Outcomes are cached per (program, pipeline) across the three, so a candidate runs once, but
each minimizer is charged every candidate it asks for, as in a campaign. ``--cache FILE``
keeps the findings and that outcome cache between runs (for comparing minimizer variants
on the same outcomes; delete it after changing torch or the oracle). Prints one line per
finding and, per minimizer, the median and total of minimized statements and executions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from aliasfuzz.campaign.driver import run_campaign
from aliasfuzz.campaign.options import CampaignOptions
from aliasfuzz.campaign.shrink import is_valid, same_failure, shrink, without_statement
from aliasfuzz.campaign.worker import Worker
from aliasfuzz.fuzz.ir import Program


def ddmin(program: Program, outcome: dict[str, Any], evaluate, budget: int):
    """The campaign's minimizer before Hypothesis: delete one statement (back to front) or
    output at a time, to a fixpoint; ``(smallest, its outcome, executions spent)``."""
    best, best_out, spent = program, outcome, 0

    def attempt(candidate: Program) -> bool:
        nonlocal best, best_out, spent
        if spent >= budget or not is_valid(candidate):
            return False
        spent += 1
        out = evaluate(candidate)
        if same_failure(outcome, out):
            best, best_out = candidate, out
            return True
        return False

    changed = True
    while changed and spent < budget:
        changed = False
        for i in reversed(range(len(best.body))):
            if i < len(best.body) and attempt(without_statement(best, i)):
                changed = True
        for o in reversed(best.outputs):
            outs = tuple(x for x in best.outputs if x != o)
            if attempt(best.with_body(best.body, outs)):
                changed = True
    return best, best_out, spent


def _findings(args, tmp: Path) -> list[tuple[str, Program, dict[str, Any]]]:
    opts = CampaignOptions(
        programs=args.programs,
        seed=args.seed,
        workers=args.workers,
        corpus=str(tmp / "corpus"),
        state=str(tmp / "state"),
        report="none",
        shrink=False,
        **({"pipelines": tuple(args.pipelines.split(","))} if args.pipelines else {}),
    )
    res = run_campaign(opts.validate(), show=False)
    events = [json.loads(x) for x in (res.dir / "journal.jsonl").read_text().splitlines()]
    tasks = {(e["i"], e["pipeline"]): e for e in events if e["t"] == "task"}
    out = []
    for e in events:
        if e["t"] == "finding" and e.get("id"):
            t = tasks[(e["i"], e["pipeline"])]
            out.append((e["pipeline"], Program.from_json(t["program"]), t["outcome"]))
    return out


class _Runner:
    """Cached, thread-safe evaluation on per-thread workers."""

    def __init__(self, root: Path, timeout: float):
        self.root, self.timeout = root, timeout
        self.cache: dict[tuple[str, str], dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.local = threading.local()
        self.workers: list[Worker] = []
        self.executions = 0

    def _worker(self) -> Worker:
        if not hasattr(self.local, "w"):
            with self.lock:
                w = Worker(self.root / f"w{len(self.workers)}", timeout=self.timeout, recycle=200)
                self.workers.append(w)
            self.local.w = w
        return self.local.w

    def evaluate(self, program: Program, pipeline: str) -> dict[str, Any]:
        key = (program.dumps(), pipeline)
        with self.lock:
            if key in self.cache:
                return self.cache[key]
        task = {"program": program.to_json(), "pipeline": pipeline, "device": "cpu"}
        out = self._worker().run(task)
        with self.lock:
            self.executions += 1
            self.cache[key] = out
        return out

    def close(self) -> None:
        for w in self.workers:
            w.close()


def _hyp_then_dd(program, outcome, evaluate, budget):
    small, out, spent = shrink(program, outcome, evaluate, budget)
    if small == program:  # not reproduced (or not shrunk): ddmin starts from the original
        return small, out, spent
    small2, out2, spent2 = ddmin(small, out, evaluate, budget - spent)
    return small2, out2, spent + spent2


def _cache_id(args) -> list:
    return [args.seed, args.programs, args.pipelines]


def _load_cache(args) -> dict[str, Any] | None:
    if not args.cache or not Path(args.cache).exists():
        return None
    cache = json.loads(Path(args.cache).read_text())
    return cache if cache.get("id") == _cache_id(args) else None


def _save_cache(args, findings, outcomes) -> None:
    Path(args.cache).write_text(
        json.dumps(
            {
                "id": _cache_id(args),
                "findings": [(p, x.to_json(), o) for p, x, o in findings],
                "outcomes": {json.dumps(list(k)): v for k, v in outcomes.items()},
            }
        )
    )


MINIMIZERS = {"ddmin": ddmin, "hypothesis": shrink, "hypothesis+ddmin": _hyp_then_dd}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pipelines", default=None, help="comma list (campaign default)")
    ap.add_argument("--budget", type=int, default=40, help="executions per shrink (40)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--out", help="write the per-finding rows as JSON here")
    ap.add_argument("--cache", help="findings and outcomes kept between runs (JSON)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        cache = _load_cache(args)
        if cache is None:
            findings = _findings(args, tmp)
        else:
            findings = [(p, Program.from_json(x), o) for p, x, o in cache["findings"]]
        print(f"{len(findings)} findings to shrink (seed {args.seed}, {args.programs} programs)")
        runner = _Runner(tmp / "bench-workers", args.timeout)
        if cache is not None:
            runner.cache = {tuple(json.loads(k)): v for k, v in cache["outcomes"].items()}

        def one(f):
            pipeline, program, outcome = f
            row = {
                "pipeline": pipeline,
                "verdict": outcome["verdict"],
                "check": outcome.get("check"),
                "original": len(program.body),
            }
            for name, fn in MINIMIZERS.items():
                small, _, spent = fn(
                    program, outcome, lambda p, pl=pipeline: runner.evaluate(p, pl), args.budget
                )
                row[name] = {"statements": len(small.body), "executions": spent}
            return row

        try:
            with ThreadPoolExecutor(args.workers) as ex:
                rows = list(ex.map(one, findings))
        finally:
            runner.close()
            if args.cache:
                _save_cache(args, findings, runner.cache)
    for r in rows:
        cells = "  ".join(
            f"{n}: {r[n]['statements']} st / {r[n]['executions']} ex" for n in MINIMIZERS
        )
        print(
            f"{r['pipeline']:<20} {r['verdict']:<17} {str(r['check']):<18} "
            f"{r['original']} st  {cells}"
        )
    for n in MINIMIZERS:
        st = [r[n]["statements"] for r in rows]
        ex = [r[n]["executions"] for r in rows]
        if rows:
            print(
                f"{n}: median {statistics.median(st)} statements (total {sum(st)}), "
                f"median {statistics.median(ex)} executions (total {sum(ex)})"
            )
    print(f"distinct candidates run: {runner.executions}")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
