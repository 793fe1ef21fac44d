"""Validity bench: how many generated programs eager rejects, and how fast we generate.

Generates N programs (default 10,000) with a fixed seed through the deterministic sampler
(:func:`aliasfuzz.fuzz.sample.generate`), runs each eagerly on fresh inputs and prints:
the invalid rate (eager raised; goal < 1 %), programs generated per second (generation
and type-checking only), eager runs per second, statements per program, per-kind and
per-op statement counts, generator rejections per op and per one-eager-meaning rule
(statement tries that validation refused and the generator redrew), and the most common
eager errors.

    python bench/validity.py [-n 10000] [--seed 0] [--max-statements 8] [--show 3]

Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from aliasfuzz.fuzz.eager import run_eager
from aliasfuzz.fuzz.ops import lookup
from aliasfuzz.fuzz.render import render_module
from aliasfuzz.fuzz.sample import generate
from aliasfuzz.fuzz.strategies import GenStats


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:110] if text else ''}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-statements", type=int, default=8)
    ap.add_argument("--show", type=int, default=0, help="print this many invalid programs")
    args = ap.parse_args(argv)

    stats = GenStats()
    t0 = time.perf_counter()
    progs = generate(args.n, args.seed, stats=stats, max_statements=args.max_statements)
    t_gen = time.perf_counter() - t0

    errors: Counter[str] = Counter()
    bad_ops: Counter[str] = Counter()
    bad_index: list[int] = []
    shown = 0
    t0 = time.perf_counter()
    for p in progs:
        r = run_eager(p)
        if r.error is None:
            continue
        errors[_first_line(r.error)] += 1
        bad_ops.update({op.op for op in p.body})
        bad_index.append(p.meta["index"])
        if shown < args.show:
            shown += 1
            print(
                f"--- invalid program (seed {args.seed}, index {p.meta['index']}): {_first_line(r.error)}"
            )
            print(render_module(p).source)
    t_run = time.perf_counter() - t0

    n = len(progs)
    invalid = sum(errors.values())
    statements = sum(len(p.body) for p in progs)
    kinds = Counter(lookup(op.op).kind.value for p in progs for op in p.body)
    print(f"programs            {n}  (seed {args.seed}, max_statements {args.max_statements})")
    print(f"invalid (eager)     {invalid}  = {100 * invalid / max(n, 1):.2f} %  (goal < 1 %)")
    print(f"generated / s       {n / t_gen:.0f}  ({t_gen:.2f} s)")
    print(f"eager runs / s      {n / t_run:.0f}  ({t_run:.2f} s)")
    print(f"statements/program  {statements / max(n, 1):.2f}  (empty slots {stats.empty_slots})")
    print("by kind             " + ", ".join(f"{k} {c}" for k, c in kinds.most_common()))
    print("by op               " + ", ".join(f"{k} {c}" for k, c in sorted(stats.accepted.items())))
    never = sorted({op for (op, _) in stats.rejected} - set(stats.accepted))
    if never:
        print("never accepted      " + ", ".join(never))
    from aliasfuzz.fuzz.validate import RULE_NAMES

    by_rule = Counter()
    for (_, why), c in stats.rejected.items():
        if why in RULE_NAMES:
            by_rule[why] += c
    print("rule-rejected tries " + (", ".join(f"{r} {by_rule[r]}" for r in RULE_NAMES) or "none")
          + "  (statements validation refused for no single eager meaning; redrawn)")
    top_rej = stats.rejected.most_common(8)
    if top_rej:
        print("rejected tries      " + ", ".join(f"{o}/{why} {c}" for (o, why), c in top_rej))
    for msg, c in errors.most_common(10):
        print(f"eager error {c:6d}  {msg}")
    if bad_index:
        print(
            "invalid indices     " + " ".join(map(str, bad_index[:20])) + " (generate_one(seed, i))"
        )
    if bad_ops:
        print("ops in invalid      " + ", ".join(f"{o} {c}" for o, c in bad_ops.most_common(12)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
