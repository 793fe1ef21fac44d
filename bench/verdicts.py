"""Verdict counts of the full oracle on random programs, and the unconfirmed-findings check.

Judges ``--n`` programs of ``--seed`` under ``--pipeline`` (default the fast
``inductor-reinplace`` workhorse; unpatched torch) with :func:`aliasfuzz.oracle.judge.judge`
and prints the verdict counts, the findings by check and signature, and the number of
*unconfirmed* findings: a finding must rest either on a failed differential check (an
executed disagreement with eager) or on a claim whose confirmation ran and succeeded.
Issue 4's goal: 2,000 programs, zero unconfirmed findings. Exit status 1 if any.

    python bench/verdicts.py [--n 2000] [--seed 0] [--jobs 2] [--pipeline inductor-reinplace]
"""

from __future__ import annotations

import argparse
import collections
import logging
import multiprocessing as mp
import sys
import time
import warnings

_DIFFERENTIAL = {"values", "inputs", "aliasing", "requires_grad", "exceptions"}


def _judge_range(args: tuple[int, int, int, str]) -> list[dict]:
    seed, lo, hi, pipeline = args
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    from aliasfuzz.fuzz.sample import generate_one
    from aliasfuzz.oracle.findings import from_judgement
    from aliasfuzz.oracle.judge import judge

    rows = []
    for i in range(lo, hi):
        j = judge(generate_one(seed, i), pipeline)
        f = from_judgement(j)
        confirmed = None
        if f is not None:
            claim_ok = any(
                c.claim is j.verdict and c.confirmation is not None and c.confirmation.confirmed
                for c in j.claims
            )
            confirmed = j.check in _DIFFERENTIAL or claim_ok
        rows.append(
            {"index": i, "verdict": j.verdict.value, "check": j.check,
             "signature": f.signature if f else None, "confirmed": confirmed,
             "explanation": j.explanation[:160]}
        )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--pipeline", default="inductor-reinplace")
    ap.add_argument("--progress", action="store_true", help="print progress on stderr")
    args = ap.parse_args()
    t0 = time.perf_counter()
    step = 25
    chunks = [(args.seed, lo, min(lo + step, args.n), args.pipeline) for lo in range(0, args.n, step)]
    rows: list[dict] = []
    # multiprocessing.Pool, not ProcessPoolExecutor(max_tasks_per_child=...): the latter can
    # deadlock when it replaces a worker (CPython gh-115634); workers are recycled because
    # every compile leaks a little memory (seams §5).
    ctx = mp.get_context("spawn")
    with ctx.Pool(processes=args.jobs, maxtasksperchild=4) as pool:
        for part in pool.imap(_judge_range, chunks):
            rows += part
            if args.progress:
                print(f"  {len(rows)}/{args.n}", file=sys.stderr, flush=True)
    counts = collections.Counter(r["verdict"] for r in rows)
    print(f"programs: {len(rows)}  pipeline: {args.pipeline}  seed: {args.seed}  "
          f"time: {time.perf_counter() - t0:.0f} s")
    print("verdicts:", dict(counts.most_common()))
    sigs = collections.Counter((r["verdict"], r["check"], r["signature"]) for r in rows if r["signature"])
    for (v, c, s), k in sigs.most_common():
        example = next(r for r in rows if r["signature"] == s)
        print(f"  {k:4d} x {v:17s} {c or '-':13s} {s}  e.g. #{example['index']}: {example['explanation']}")
    unknown = [r for r in rows if r["verdict"] == "unknown"]
    print(f"unknown: {len(unknown)}/{len(rows)} = {100.0 * len(unknown) / max(len(rows), 1):.2f} %")
    for r in unknown[:10]:
        print(f"  #{r['index']}: {r['explanation']}")
    unconfirmed = [r for r in rows if r["confirmed"] is False]
    print(f"unconfirmed findings: {len(unconfirmed)}")
    for r in unconfirmed[:10]:
        print(f"  #{r['index']} {r['verdict']} {r['check']}: {r['explanation']}")
    return 1 if unconfirmed else 0


if __name__ == "__main__":
    sys.exit(main())
