"""Oracle cost per program and its unknown rate, on random programs.

Each program is run once through the pipeline (not timed here), then judged twice from
that Execution: ``core`` = eager reference + the five differential checks + the ground
truth of every candidate (``judge(..., confirm=False)``), and ``full`` = the same plus
confirmation runs (which re-run the pipeline, so they are counted apart). Prints medians,
p99 and the unknown rate of the full judge. Goals (issue 4): core median <= 10 ms,
unknown <= 0.1 %.

    python bench/oracle.py [--n 200] [--seed 0] [--pipeline inductor-reinplace] [--dynamic]
"""

from __future__ import annotations

import argparse
import collections
import logging
import statistics
import time
import warnings


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pipeline", default="inductor-reinplace")
    ap.add_argument("--dynamic", action="store_true", help="symbolic sizes (dynamic shapes)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)

    from aliasfuzz.fuzz.eager import make_inputs
    from aliasfuzz.fuzz.sample import generate
    from aliasfuzz.oracle.judge import judge
    from aliasfuzz.passes.pipelines import PipelineOptions, run_pipeline

    opts = PipelineOptions(dynamic=args.dynamic)

    core, full, gt = [], [], []
    verdicts: collections.Counter[str] = collections.Counter()
    for p in generate(args.n, seed=args.seed):
        ex = run_pipeline(args.pipeline, p, make_inputs(p), options=opts)
        t0 = time.perf_counter()
        j = judge(p, ex, confirm=False)
        core.append(time.perf_counter() - t0)
        from aliasfuzz.oracle.judge import _claims

        t0 = time.perf_counter()
        _claims(ex)
        gt.append(time.perf_counter() - t0)
        ex = run_pipeline(args.pipeline, p, make_inputs(p), options=opts)
        t0 = time.perf_counter()
        j = judge(p, ex, opts)
        full.append(time.perf_counter() - t0)
        verdicts[j.verdict.value] += 1
    n = len(core)
    print(f"programs: {n}  pipeline: {args.pipeline}  seed: {args.seed}  dynamic: {args.dynamic}")
    for name, xs in (("core (eager+checks+truth)", core), ("ground truth only", gt), ("full (with confirmation)", full)):
        print(f"{name:28s} median {1e3 * statistics.median(xs):8.2f} ms   p99 {1e3 * _pct(xs, 0.99):8.2f} ms")
    unknown = verdicts["unknown"]
    print(f"unknown rate: {unknown}/{n} = {100.0 * unknown / max(n, 1):.2f} %")
    print("verdicts:", dict(verdicts.most_common()))


if __name__ == "__main__":
    main()
