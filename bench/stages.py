"""Where the time goes: the per-stage cost table for N programs in one process.

Generates programs ``0..N-1`` of ``--seed`` (as a campaign does) and judges each under
every pipeline through the worker's own entries, :func:`aliasfuzz.campaign._judge.evaluate`
(and, with ``--share-trace``, ``evaluate_group`` for the Dynamo-fronted pipelines, from
one shared capture),
counting seconds per stage (:mod:`aliasfuzz.fuzz.costs`): generation, rendering, the eager
reference, each pipeline's trace / compile / run, the oracle's checks, confirmations and
second opinions. One process, no workers: no worker start, round trip, crash re-run,
shrinking or blaming (a campaign's summary and report have those rows). The first
program is a warm-up (imports, first compiles) and is left out unless ``--keep-warmup``.

Prints the table (:func:`aliasfuzz.campaign.costs.format_table`), then per pipeline its
share and seconds per program, then verdict counts.

Usage: ``python bench/stages.py [-n 40] [--seed 0] [--pipelines a,b] [--threads 1]
[--share-trace]``.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

T_IMPORT = time.perf_counter()

import torch  # noqa: E402

from aliasfuzz.campaign import _judge  # noqa: E402
from aliasfuzz.campaign.costs import format_table, table  # noqa: E402
from aliasfuzz.campaign.driver import _shared_group  # noqa: E402
from aliasfuzz.campaign.options import DEFAULT_PIPELINES  # noqa: E402
from aliasfuzz.fuzz import costs  # noqa: E402

IMPORT_SECONDS = time.perf_counter() - T_IMPORT


def judge_all(program, pipelines, device: str, share: bool,
              options: dict[str, dict] | None = None) -> dict[str, dict]:
    """Outcome per pipeline, as a campaign's workers judge them; ``options``: pipeline ->
    its options dict (none by default)."""
    options = options or {}
    group = _shared_group(list(pipelines)) if share else []
    out = _judge.evaluate_group(program, group, device, options) if group else {}
    for name in pipelines:
        if name not in out:
            out[name] = _judge.evaluate(program, name, device, options.get(name))
    return out


def measure(n: int, seed: int, pipelines: tuple[str, ...], device: str, warmup: bool,
            share: bool = True):
    """``(stage seconds, wall seconds, verdict counts)`` of judging programs 0..n-1 (and a
    warm-up program first, not counted, unless ``warmup`` is False)."""
    if warmup:
        judge_all(_judge.generate(seed, n), pipelines, device, share)  # outside the range
    costs.take()
    verdicts: Counter = Counter()
    t0 = time.perf_counter()
    for i in range(n):
        with costs.stage("generate"):
            program = _judge.generate(seed, i)
        for name, out in judge_all(program, pipelines, device, share).items():
            verdicts[(name, out["verdict"])] += 1
    wall = time.perf_counter() - t0
    return costs.take(), wall, verdicts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pipelines", default=",".join(DEFAULT_PIPELINES))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--share-trace", action="store_true",
                    help="one Dynamo capture per program for the Dynamo pipelines")
    ap.add_argument("--keep-warmup", action="store_true",
                    help="count the first program's warm-up too (no separate warm-up)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    pipelines = tuple(p for p in args.pipelines.split(",") if p)
    stages, wall, verdicts = measure(args.n, args.seed, pipelines, args.device,
                                     warmup=not args.keep_warmup,
                                     share=args.share_trace)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, device {args.device}; "
          f"seed {args.seed}, {args.n} programs x {len(pipelines)} pipelines in {wall:.1f} s "
          f"({args.n / wall:.3f} programs/s); import {IMPORT_SECONDS:.1f} s (not counted); "
          f"trace once: {'on' if args.share_trace else 'off'}")
    print(format_table(table(stages, wall, 1, args.n)))
    print()
    print(f"{'pipeline':<22} {'trace s':>8} {'compile s':>9} {'run s':>7} {'ms/program':>11} "
          f"{'share':>6}")
    for name in pipelines:
        parts = [stages.get(f"{name}.{k}", 0.0) for k in ("trace", "compile", "run")]
        print(f"{name:<22} {parts[0]:>8.2f} {parts[1]:>9.2f} {parts[2]:>7.2f} "
              f"{1000 * sum(parts) / args.n:>11.1f} {100 * sum(parts) / wall:>5.1f}%")
    print()
    print("verdicts: " + ", ".join(f"{p}/{v}: {k}" for (p, v), k in sorted(verdicts.items())))


if __name__ == "__main__":
    main()
