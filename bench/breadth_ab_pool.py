"""Pool the outputs of several ``bench/breadth_ab.py`` processes (issue 15's throughput bound).

Reads files holding the ``round ...`` and ``ratio with/without: ...`` lines of any number of
processes (what ``bench/gpu/h200.sh breadth-ab`` writes to ``breadth-ab-TAG.txt``: one block
per seed, each block ended by its ratio line), and prints per file and for all files together
the pooled ratio of judged programs/s ("with" over "without", arm-runs weighted equally, as
h200.sh's own summary line) and a bootstrap interval over seeds: seeds are resampled with
replacement (``--resamples``, a fixed random seed), so the interval says how much the figure
moves with the programs drawn, which is where its noise lies (24 programs per arm-run).

    python -m bench.breadth_ab_pool FILE [FILE ...] [--bound 0.85] [--resamples 10000]

Prints numbers; asserts nothing. Exit status 2 for a file with no block.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from pathlib import Path

_ROUND = re.compile(r"^round \d+ (with|without)\s+judged ([0-9.]+) programs/s")

#: one seed's arm-runs: (judged programs/s of "with" runs, of "without" runs)
Block = tuple[list[float], list[float]]


def blocks(text: str) -> list[Block]:
    """The seeds of one file: each ``ratio with/without`` line closes the block of ``round``
    lines before it (a process that died before its ratio line is left out)."""
    out: list[Block] = []
    cur: Block = ([], [])
    for line in text.splitlines():
        m = _ROUND.match(line)
        if m:
            cur[0 if m[1] == "with" else 1].append(float(m[2]))
        elif line.startswith("ratio with/without: judged"):
            if cur[0] and cur[1]:
                out.append(cur)
            cur = ([], [])
    return out


def pooled(bs: list[Block]) -> float:
    """Mean judged programs/s of every "with" arm-run over that of every "without" one."""
    w = [x for b in bs for x in b[0]]
    wo = [x for b in bs for x in b[1]]
    return (sum(w) / len(w)) / (sum(wo) / len(wo))


def interval(bs: list[Block], resamples: int, bound: float) -> tuple[float, float, float]:
    """(2.5th percentile, 97.5th percentile, share below ``bound``) of the pooled ratio over
    ``resamples`` bootstrap draws of the seeds."""
    rng = random.Random(0)
    rs = sorted(pooled([rng.choice(bs) for _ in bs]) for _ in range(resamples))
    return rs[int(0.025 * resamples)], rs[int(0.975 * resamples) - 1], sum(r < bound for r in rs) / resamples


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--bound", type=float, default=0.85, help="the ratio the bound allows (1 - 15 %%)")
    ap.add_argument("--resamples", type=int, default=10000)
    args = ap.parse_args(argv)
    every: list[Block] = []
    for f in args.files:
        bs = blocks(f.read_text())
        if not bs:
            print(f"breadth_ab_pool: error: {f}: no seed's block (round lines ended by a ratio line)",
                  file=sys.stderr)
            return 2
        every += bs
        print(f"{f.name}: {len(bs)} seeds, ratio {pooled(bs):.3f}")
    lo, hi, below = interval(every, args.resamples, args.bound)
    runs = sum(len(b[0]) for b in every)
    print(f"all: {len(every)} seeds, {runs} arm-runs per arm, ratio {pooled(every):.3f}, "
          f"95 % bootstrap interval over seeds [{lo:.3f}, {hi:.3f}], "
          f"{100 * below:.1f} % of resamples below {args.bound}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
