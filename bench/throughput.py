"""The default campaign's programs/s before and after a change of options, each in its own process.

Runs ``aliasfuzz run --programs N --seed S --workers W`` (default pipelines, no report,
a fresh corpus per run) with the ``--before`` flags and with the ``--after`` flags,
``--rounds`` times each, alternating which goes first (A B B A ...: the box is shared, so
the load drifts). Every run gets a fresh ``--state`` (so a shared kernel cache starts
cold in each), unless ``--keep-state``: then the after runs share one state folder, as a
user's ``.aliasfuzz`` is (``--kernel-cache shared`` keeps its kernel cache there; with the
same seed the later after runs find every kernel of the same programs: an upper bound, not
what campaigns of new seeds see). Prints,
per run, the campaign's own summary line and the load average, then the programs/s of each
setting (total programs over total seconds), their ratio, whether the verdict counts of
every run were the same, and the root causes each run filed (corpus entry ids) and any
that one setting filed and the other did not. With ``--fast-path`` it also runs the
fast path alone (``--pipelines inductor-reinplace``, after flags) and prints its programs/s
per worker (one worker per core). Campaign wall time includes worker start, shrinking and
blaming of the findings, as a real campaign's.

Usage: ``python bench/throughput.py [-n 20] [--seed 0] [--workers 2] [--rounds 1]
[--before "--no-shrink-once --kernel-cache worker"] [--after ""] [--keep-state]
[--fast-path] [--seed-corpus DIR]``. ``--seed-corpus`` copies DIR's entries into each run's
fresh corpus first, as a nightly campaign starts from ``corpus/`` (a known bug's entry is
then there from the start: what ``--no-known-first`` changes).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_SUMMARY = re.compile(
    r"campaign \S+ \(done\): (\d+) programs(?: \([^)]*\))?, \d+ runs in ([\d.]+) s \([\d.]+ programs/s\); (.*)"
)


def campaign(n: int, seed: int, workers: int, flags: list[str], state: Path, corpus: Path,
             label: str, seed_corpus: Path | None = None) -> tuple[int, float, str, set[str]]:
    """``(programs, seconds, verdict counts, root-cause ids)`` of one campaign in a fresh
    process; ``seed_corpus``: a corpus whose entries ``corpus`` starts with."""
    cmd = [sys.executable, "-m", "aliasfuzz.cli", "run", "--programs", str(n), "--seed",
           str(seed), "--workers", str(workers), "--report", "none", "-q",
           "--state", str(state), "--corpus", str(corpus), *flags]
    if seed_corpus is not None and not corpus.exists():
        shutil.copytree(seed_corpus, corpus)
    corpus.mkdir(parents=True, exist_ok=True)  # run refuses a named corpus that is not there
    load = os.getloadavg()[0]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=7200)
    m = _SUMMARY.search(r.stdout)
    if m is None:
        raise SystemExit(f"campaign failed (exit {r.returncode}):\n{r.stdout}\n{r.stderr}")
    roots = {d.name for d in corpus.iterdir() if (d / "meta.json").exists()} \
        if corpus.is_dir() else set()
    print(f"{label:<6} load {load:4.1f}-{os.getloadavg()[0]:4.1f} {m.group(0)[:110]}; "
          f"{len(roots)} root causes; {_shrinks(state)}", flush=True)
    return int(m.group(1)), float(m.group(2)), _verdicts(state), roots


def _verdicts(state: Path) -> str:
    """The newest campaign's verdict counts per pipeline under ``state``, from its journal
    (the summary line no longer carries them since the mutants' count joined it)."""
    from collections import Counter

    counts = Counter((e["pipeline"], e["outcome"]["verdict"]) for e in _journal(state)
                     if e["t"] == "task")
    return "; ".join(f"{p} {v} {n}" for (p, v), n in sorted(counts.items()))


def _journal(state: Path) -> list[dict]:
    """The events of the newest campaign's journal under ``state``."""
    runs = sorted((state / "runs").glob("*"), key=lambda p: p.stat().st_mtime)
    return [json.loads(x) for x in (runs[-1] / "journal.jsonl").read_text().splitlines()]


def _shrinks(state: Path) -> str:
    """What the newest campaign under ``state`` spent on shrinking, from its journal."""
    events = _journal(state)
    found = [e for e in events if e["t"] == "finding" and e.get("id")]
    seconds = sum((e.get("costs") or {}).get("shrink", 0.0) for e in found)
    return (f"{len(found)} shrunk findings ({sum(1 for e in found if e.get('follows'))} "
            f"followed, {sum(1 for e in found if e.get('follow_refused'))} refused, "
            f"{sum(1 for e in found if e.get('known_first'))} known-first), "
            f"shrink {seconds:.0f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--before", default="--no-shrink-once --kernel-cache worker")
    ap.add_argument("--after", default="")
    ap.add_argument("--keep-state", action="store_true",
                    help="after runs share one --state (a warm kernel cache after the first)")
    ap.add_argument("--seed-corpus", type=Path, help="entries each run's corpus starts with")
    ap.add_argument("--fast-path", action="store_true",
                    help="also the fast path alone: programs/s per worker")
    args = ap.parse_args()
    flags = {False: shlex.split(args.before), True: shlex.split(args.after)}
    totals = {False: [0, 0.0], True: [0, 0.0]}
    verdicts: dict[bool, set[str]] = {False: set(), True: set()}
    roots: dict[bool, list[set[str]]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        run = 0
        for k in range(args.rounds):
            for after in ((False, True) if k % 2 == 0 else (True, False)):
                run += 1
                keep = after and args.keep_state
                state = root / "state-after" if keep else root / f"state-{run}"
                programs, seconds, counts, found = campaign(
                    args.n, args.seed, args.workers, flags[after], state,
                    root / f"corpus-{run}", "after" if after else "before", args.seed_corpus)
                totals[after][0] += programs
                totals[after][1] += seconds
                verdicts[after].add(counts)
                roots[after].append(found)
        rate = {s: p / t for s, (p, t) in totals.items()}
        print(f"seed {args.seed}, {args.n} programs, {args.workers} workers, "
              f"{args.rounds} round(s), {os.cpu_count()} cores")
        print(f"before ({args.before or 'defaults'}): {rate[False]:.3f} programs/s")
        print(f"after  ({args.after or 'defaults'}): {rate[True]:.3f} programs/s")
        print(f"ratio after/before: {rate[True] / rate[False]:.3f}")
        same = len(verdicts[False] | verdicts[True]) == 1
        print(f"verdict counts the same in every run: {same}")
        if not same:
            for after, seen in verdicts.items():
                for v in sorted(seen):
                    print(("after " if after else "before") + ": " + v)
        every = {s: set().union(*r) for s, r in roots.items()}
        print(f"root causes: before {sorted(len(r) for r in roots[False])}, after "
              f"{sorted(len(r) for r in roots[True])}; filed only before: "
              f"{sorted(every[False] - every[True])}; only after: "
              f"{sorted(every[True] - every[False])}")
        if args.fast_path:
            programs, seconds, _, _ = campaign(
                args.n, args.seed, args.workers,
                [*flags[True], "--pipelines", "inductor-reinplace"], root / "state-fast",
                root / "corpus-fast", "fast")
            print(f"fast path (inductor-reinplace alone, after flags): "
                  f"{programs / seconds:.3f} programs/s, "
                  f"{programs / seconds / args.workers:.3f} programs/s per worker (core)")


if __name__ == "__main__":
    main()
