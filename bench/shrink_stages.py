"""Where a shrink's time goes, per stage of the runs it makes (issue 16: shrinking is a third
of a CPU campaign's worker time, and a campaign's stage table counts it as one ``shrink`` row).

Takes the shrunk findings of a campaign journal (``--journal``: their task events carry the
program and its outcome), re-shrinks ``-n`` of them (``random.Random(--seed)``) in one
:class:`~aliasfuzz.campaign.worker.Worker` as the campaign would (budget 40, the finding's
pipeline and options), and prints per finding its size before and after, the executions and
the seconds, then the wall seconds per stage summed over every execution (the worker's own
``costs``), each as a share of the shrinks' wall time (a fresh kernel cache: a campaign's
shared one hits more often, so compile's share here is an upper bound).

Usage: ``PYTHONPATH=. python bench/shrink_stages.py --journal STATE/runs/<id>/journal.jsonl
[-n 12] [--seed 1]``.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--journal", required=True, type=Path)
    ap.add_argument("-n", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    from aliasfuzz.campaign.options import CampaignOptions, task_options
    from aliasfuzz.campaign.shrink import shrink
    from aliasfuzz.campaign.worker import Worker
    from aliasfuzz.fuzz.ir import Program

    events = [json.loads(x) for x in args.journal.read_text().splitlines()]
    shrunk = {(e["i"], e["pipeline"]) for e in events
              if e.get("t") == "finding" and e.get("id") and not e.get("known_first")}
    tasks = [e for e in events if e.get("t") == "task" and "program" in e
             and (e["i"], e["pipeline"]) in shrunk]
    random.Random(args.seed).shuffle(tasks)
    tasks = tasks[:args.n]
    opts = CampaignOptions(programs=1)
    stages: collections.Counter = collections.Counter()
    wall = steps = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        worker = Worker(Path(tmp) / "w", timeout=120, recycle=200,
                        env={"TORCHINDUCTOR_CACHE_DIR": str(Path(tmp) / "kc")})
        try:
            for e in tasks:
                program, pipeline = Program.from_json(e["program"]), e["pipeline"]

                def step(candidate: Program, pipeline: str = pipeline) -> dict:
                    out = worker.run({"program": candidate.to_json(), "pipeline": pipeline,
                                      "device": "cpu", "options": task_options(
                                          opts.pipeline_options, pipeline, candidate)})
                    stages.update(out.get("costs") or {})
                    return out

                t0 = time.perf_counter()
                small, _, spent = shrink(program, e["outcome"], step, 40)
                dt = time.perf_counter() - t0
                wall, steps = wall + dt, steps + spent
                print(f"{pipeline:<18} {e['outcome']['verdict']:<16} {len(program.body)} -> "
                      f"{len(small.body)} statements, {spent:2d} executions, {dt:5.1f} s",
                      flush=True)
        finally:
            worker.close()
    print(f"{len(tasks)} shrinks, {int(steps)} executions, {wall:.1f} s wall")
    for stage, seconds in stages.most_common():
        print(f"{stage:<28} {seconds:7.1f} s {100 * seconds / wall:5.1f} % of the shrinks' wall")


if __name__ == "__main__":
    main()
