"""The default campaign's programs/s before and after trace-once, each in its own process.

Runs ``aliasfuzz run --programs N --seed S --workers W`` (default pipelines, no report,
fresh state and corpus under a temporary folder) without ``--share-trace`` ("before": one
Dynamo capture per pipeline) and with it ("after": one per program,
:mod:`aliasfuzz.passes.shared`), ``--rounds`` times each, alternating which goes first.
Prints, per run, the campaign's own summary line (programs, seconds, programs/s), then the
programs/s of each setting (total programs over total seconds), their ratio, and whether
the verdict counts of every round were the same. Campaign wall time includes worker start,
shrinking and blaming of the findings, as a real campaign's.

Usage: ``python bench/throughput.py [-n 20] [--seed 0] [--workers 2] [--rounds 1]``.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

_SUMMARY = re.compile(
    r"campaign \S+ \(done\): (\d+) programs, \d+ runs in ([\d.]+) s \([\d.]+ programs/s\); (.*)"
)


def campaign(n: int, seed: int, workers: int, share: bool, root: Path) -> tuple[int, float, str]:
    """``(programs, seconds, verdict counts)`` of one campaign in a fresh process."""
    cmd = [sys.executable, "-m", "aliasfuzz.cli", "run", "--programs", str(n), "--seed",
           str(seed), "--workers", str(workers), "--report", "none", "-q",
           "--state", str(root / "state"), "--corpus", str(root / "corpus")]
    if share:
        cmd.append("--share-trace")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    m = _SUMMARY.search(r.stdout)
    if m is None:
        raise SystemExit(f"campaign failed (exit {r.returncode}):\n{r.stdout}\n{r.stderr}")
    print(("after " if share else "before") + " " + m.group(0)[:160], flush=True)
    return int(m.group(1)), float(m.group(2)), m.group(3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    totals = {False: [0, 0.0], True: [0, 0.0]}
    verdicts: dict[bool, set[str]] = {False: set(), True: set()}
    for k in range(args.rounds):
        for share in ((False, True) if k % 2 == 0 else (True, False)):
            with tempfile.TemporaryDirectory() as tmp:
                programs, seconds, counts = campaign(args.n, args.seed, args.workers, share,
                                                     Path(tmp))
            totals[share][0] += programs
            totals[share][1] += seconds
            verdicts[share].add(counts)
    rate = {s: p / t for s, (p, t) in totals.items()}
    print(f"seed {args.seed}, {args.n} programs, {args.workers} workers, {args.rounds} round(s)")
    print(f"before (one capture per pipeline): {rate[False]:.3f} programs/s")
    print(f"after  (--share-trace):            {rate[True]:.3f} programs/s")
    print(f"ratio after/before: {rate[True] / rate[False]:.3f}")
    same = len(verdicts[False] | verdicts[True]) == 1
    print(f"verdict counts the same in every run: {same}")
    if not same:
        for share, seen in verdicts.items():
            for v in sorted(seen):
                print(("after " if share else "before") + ": " + v)


if __name__ == "__main__":
    main()
