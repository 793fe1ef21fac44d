"""Mutational generation bench (issue 15): what ``--mutate 1`` draws and what it costs.

Draws programs ``0..N-1`` of ``--seed`` the way a campaign with ``--mutate 1`` does
(:class:`aliasfuzz.campaign.sources.Programs` over the sources of ``--corpus``: its entries'
programs and the seed twins), runs each eagerly on fresh inputs, and prints: how many were
mutants (the rest fell back to fresh generation: no mutant validated), mutants per operator
and per source, the eager-invalid rate of the mutants (goal < 1 %, as for fresh programs,
``bench/validity.py``), and the time to draw one program against fresh generation of the
same indices, in the same process (the ratio).

    python bench/mutation.py [-n 2000] [--seed 0] [--corpus corpus]

Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from aliasfuzz.campaign import sources
from aliasfuzz.fuzz.eager import run_eager
from aliasfuzz.fuzz.sample import generate_one


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--corpus", default="corpus")
    args = ap.parse_args(argv)

    found = sources.collect(args.corpus)
    draws = sources.Programs(args.seed, 8, 1.0, found)
    t0 = time.perf_counter()
    progs = [draws[i] for i in range(args.n)]
    t_mut = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(args.n):
        generate_one(args.seed, i, max_statements=8)
    t_fresh = time.perf_counter() - t0

    mutants = [p for p in progs if p.meta.get("generator") == "mutation"]
    by_op = Counter(p.meta["mutation"] for p in mutants)
    by_source = Counter(p.meta["mutated_from"].split("/")[0] if "/" in p.meta["mutated_from"]
                        else "entry" for p in mutants)
    errors: Counter[str] = Counter()
    t0 = time.perf_counter()
    for p in mutants:
        r = run_eager(p)
        if r.error is not None:
            errors[f"{p.meta['mutation']}: {type(r.error).__name__}: "
                   f"{str(r.error).strip().splitlines()[0][:90] if str(r.error).strip() else ''}"] += 1
    t_eager = time.perf_counter() - t0
    n, m = args.n, len(mutants)
    print(f"sources             {len(found)} ({sum(1 for i, _ in found if i.startswith('seeds/'))} "
          f"seed twins) from {args.corpus}")
    print(f"programs            {n}  (seed {args.seed}, --mutate 1)")
    print(f"mutants             {m} = {100 * m / max(n, 1):.1f} %  (the rest: no valid mutant, "
          "generated fresh)")
    print("by operator         " + ", ".join(f"{k} {v}" for k, v in sorted(by_op.items())))
    print("by source           " + ", ".join(f"{k} {v}" for k, v in sorted(by_source.items())))
    bad = sum(errors.values())
    print(f"invalid (eager)     {bad} = {100 * bad / max(m, 1):.2f} % of mutants  (goal < 1 %)")
    print(f"draw / program      {1000 * t_mut / n:.2f} ms with --mutate 1, "
          f"{1000 * t_fresh / n:.2f} ms fresh (ratio {t_mut / max(t_fresh, 1e-9):.2f})")
    print(f"eager runs / s      {m / max(t_eager, 1e-9):.0f}")
    for e, c in errors.most_common(8):
        print(f"  {c:5d}  {e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
