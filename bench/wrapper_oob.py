"""How often Inductor's wrapper makes a view past its storage on generated programs, and
how often the process running it dies of it (glibc's heap check) or does not (silent).

Each program ``i`` of ``--seed`` in ``--start .. --start + N - 1`` runs under ``inductor``
in a child interpreter with every ``reinterpret_tensor`` checked
(:func:`aliasfuzz.oracle.heap.run_captured`, :mod:`aliasfuzz.oracle.wrapper_bounds`), then
glibc checks the heap (``check_heap``). Prints one line per program (flushed, so that a
run cut short says how far it got), then the counts: programs, with such a view, of those how many died, and
deaths without such a view. The campaign today finds only the deaths (``oracle/heap.py``);
the silent ones are what a check in every worker's Inductor run would add.

Usage: ``python -m bench.wrapper_oob -n 100 [--seed 0] [--start 0] [--device cpu]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()

    from aliasfuzz.campaign import _judge
    from aliasfuzz.fuzz.isolated import Died, run_isolated
    from aliasfuzz.oracle.wrapper_bounds import read_found

    views = died = both = errors = 0
    t0 = time.perf_counter()
    for i in range(args.start, args.start + args.n):
        program = _judge.generate(args.seed, i)
        with tempfile.TemporaryDirectory(prefix="af-oob-") as tmp:
            path = f"{tmp}/views"
            try:
                got = run_isolated("aliasfuzz.oracle.heap:run_captured",
                                   (program.to_json(), "inductor", args.device, None, path),
                                   timeout=300, check_heap=True)
            except RuntimeError as e:  # the harness raised: counted, not judged
                errors += 1
                print(f"program {i}: harness error {str(e).splitlines()[-1][:120]}")
                continue
            found = read_found(path)
        dead = isinstance(got, Died) and bool(got.heap)
        views += bool(found)
        died += dead
        both += bool(found) and dead
        # a line per program, flushed: a run cut short (a device call's limit) still says
        # how far it got
        what = found[0].message() if found else "no view out of bounds"
        print(f"program {i}: {'died (' + got.how + ')' if dead else 'survived'}; {what}",
              flush=True)
    print(f"seed {args.seed}, programs {args.start}..{args.start + args.n - 1} on "
          f"{args.device}, {time.perf_counter() - t0:.0f} s: {views} with a view out of bounds "
          f"({both} of them died of it, {views - both} silent); {died - both} heap deaths "
          f"without one; {errors} harness errors")


if __name__ == "__main__":
    main()
