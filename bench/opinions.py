"""Cost of one eager meaning per program: the second eager opinion and judge-time validation.

Generates N programs (default 300, seed 0; the campaign's sampler) and, in this one process,
times per program:

* ``eager``: the plain eager reference the judge computes (fresh inputs, one run);
* ``opinion``: the second opinion of ``oracle/opinions.py`` on the same program (fresh
  inputs, deterministic algorithms, one intra-op thread; plus the other device on a GPU
  host), and its comparison with the first run;
* ``validate``: the one-eager-meaning rules the judge applies to every Program
  (``fuzz.validate.infer``).

It prints median / mean / p90 milliseconds of each, the ratio opinion / eager (medians and
totals), how many opinions disagreed or were unavailable (generated programs should give
none), and what the review costs a campaign when it runs only for findings: the opinion's
total time times the share of findings (``--finding-rate``, default 0.11: 223 findings of
2,000 programs in bench/verdicts.py on inductor-reinplace).

    python bench/opinions.py [-n 300] [--seed 0] [--device cpu] [--finding-rate 0.11]

Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter

from aliasfuzz.fuzz.eager import make_inputs
from aliasfuzz.fuzz.render import load_function
from aliasfuzz.fuzz.sample import generate
from aliasfuzz.fuzz.validate import infer
from aliasfuzz.oracle import opinions
from aliasfuzz.oracle.confirm import run_callable_named


def _ms(xs: list[float]) -> str:
    xs = sorted(xs)
    p90 = xs[min(len(xs) - 1, int(0.9 * len(xs)))]
    return f"median {1e3 * statistics.median(xs):7.3f}  mean {1e3 * statistics.mean(xs):7.3f}  p90 {1e3 * p90:7.3f} ms"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--finding-rate", type=float, default=0.11)
    args = ap.parse_args(argv)

    programs = generate(args.n, args.seed)
    other = opinions.other_device(args.device)
    with opinions.deterministic_one_thread():  # the first switch imports torch._inductor.config
        pass
    t_eager, t_op, t_val = [], [], []
    status: Counter = Counter()
    for p in programs:
        fn, _ = load_function(p)
        names = [t.name for t in p.inputs]
        run_callable_named(fn, names, make_inputs(p, args.device))  # warm: first call costs

        t0 = time.perf_counter()
        eager = run_callable_named(fn, names, make_inputs(p, args.device))
        t1 = time.perf_counter()

        def run_on(dev, fn=fn, names=names, p=p):
            return run_callable_named(fn, names, make_inputs(p, dev))

        ops = opinions.second_opinions(
            eager, names, lambda run_on=run_on: run_on(args.device),
            (other, lambda run_on=run_on: run_on(other)) if other else None, args.device,
        )
        t2 = time.perf_counter()
        infer(p)
        t3 = time.perf_counter()
        t_eager.append(t1 - t0)
        t_op.append(t2 - t1)
        t_val.append(t3 - t2)
        status.update(f"{o.name}:{o.status}" for o in ops)

    n = len(programs)
    ratio_med = statistics.median(t_op) / statistics.median(t_eager)
    ratio_tot = sum(t_op) / sum(t_eager)
    print(f"programs            {n}  (seed {args.seed}, device {args.device}, other device {other})")
    print(f"eager reference     {_ms(t_eager)}")
    print(f"second opinion      {_ms(t_op)}")
    print(f"validation (rules)  {_ms(t_val)}")
    print(f"opinion / eager     {ratio_med:.2f}x (medians), {ratio_tot:.2f}x (totals)")
    print(f"opinions            {', '.join(f'{k} {v}' for k, v in sorted(status.items()))}")
    per_program = args.finding_rate * sum(t_op) / n
    print(f"campaign overhead   {1e3 * per_program:.3f} ms per program at a finding rate of "
          f"{args.finding_rate:g} (opinions run for findings only)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
