"""Does tracing once per program pay? The Dynamo pipelines with and without a shared capture.

Judges programs ``0..N-1`` of ``--seed`` under the Dynamo-fronted pipelines (default:
those of the default campaign, ``inductor-reinplace,inductor,aot_eager``) two ways, in one
process, alternating which goes first per program (so that neither always runs warm):

* ``separate``: each pipeline through its own ``torch.compile`` (what campaigns do);
* ``shared``: :func:`aliasfuzz.passes.shared.run_shared` on the pipelines
  :func:`~aliasfuzz.passes.shared.plan` picks, the others (and any left out) separately;
  each execution judged by :func:`aliasfuzz.oracle.judge.judge`.

Prints the seconds of each way, programs/s and their ratio, the pipelines run shared and
left out, and whether every (program, pipeline) got the same verdict, check and
explanation both ways (the count of differences; 0 expected). One warm-up program first.

Usage: ``python bench/trace_once.py [-n 30] [--seed 0] [--pipelines a,b,c]``.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from aliasfuzz.campaign import _judge
from aliasfuzz.fuzz.eager import make_inputs
from aliasfuzz.oracle.judge import judge
from aliasfuzz.passes.pipelines import run_pipeline
from aliasfuzz.passes.shared import plan, run_shared

DEFAULT = "inductor-reinplace,inductor,aot_eager"


def _key(j) -> tuple:
    return j.verdict.value, j.check, j.explanation


def separate(program, names) -> dict[str, tuple]:
    """Each pipeline on its own, judged."""
    return {n: _key(judge(program, run_pipeline(n, program, make_inputs(program, "cpu"))))
            for n in names}


def shared(program, names, stats: Counter) -> dict[str, tuple]:
    """The planned pipelines from one capture, the rest on their own, judged."""
    picked = plan(program, names)
    exs = run_shared(program, picked) if picked else {}
    stats["shared"] += len(exs)
    stats["left out"] += len(picked) - len(exs)
    stats["not planned"] += len(names) - len(picked)
    out = {}
    for n in names:
        ex = exs.get(n) or run_pipeline(n, program, make_inputs(program, "cpu"))
        out[n] = _key(judge(program, ex))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pipelines", default=DEFAULT)
    args = ap.parse_args()
    names = [p for p in args.pipelines.split(",") if p]
    warm = _judge.generate(args.seed, 10_000)
    separate(warm, names)
    shared(warm, names, Counter())
    seconds = {"separate": 0.0, "shared": 0.0}
    stats: Counter = Counter()
    verdicts: Counter = Counter()
    diffs = 0
    for i in range(args.n):
        program = _judge.generate(args.seed, i)
        ways = [("separate", lambda p=program: separate(p, names)),
                ("shared", lambda p=program: shared(p, names, stats))]
        got = {}
        for way, run in ways if i % 2 == 0 else reversed(ways):
            t0 = time.perf_counter()
            got[way] = run()
            seconds[way] += time.perf_counter() - t0
        for n in names:
            verdicts[(n, got["separate"][n][0])] += 1
            if got["separate"][n] != got["shared"][n]:
                diffs += 1
                print(f"DIFF program {i} {n}: {got['separate'][n]} vs {got['shared'][n]}")
    rate = {w: args.n / s for w, s in seconds.items()}
    print(f"seed {args.seed}, {args.n} programs, pipelines {','.join(names)}, judged")
    for w in ("separate", "shared"):
        print(f"{w:<9} {seconds[w]:8.2f} s  {rate[w]:.3f} programs/s")
    print(f"ratio shared/separate programs/s: {rate['shared'] / rate['separate']:.3f}")
    print(f"runs shared {stats['shared']}, left out of a shared capture {stats['left out']}, "
          f"not planned {stats['not planned']}")
    print(f"verdict/check/explanation differences: {diffs}")
    print("verdicts: " + ", ".join(f"{p}/{v}: {k}" for (p, v), k in sorted(verdicts.items())))


if __name__ == "__main__":
    main()
