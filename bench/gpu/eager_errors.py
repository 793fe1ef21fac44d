"""Which generated programs make eager raise on a device, grouped by error, with an example.

    python bench/gpu/eager_errors.py --device cuda --n 500 --seed 11

Prints the count of programs generated for ``--device`` whose eager reference raises, per
exception type and first message line, followed by the smallest example's source. On a
machine without a GPU ``--device meta`` catches device mixing (CPU tensors built inside a
program meeting the inputs' device).
"""

from __future__ import annotations

import argparse
import collections

from aliasfuzz.fuzz.eager import run_eager
from aliasfuzz.fuzz.render import render_module
from aliasfuzz.fuzz.sample import generate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args()
    gen_device = "cuda" if a.device == "meta" else a.device
    counts: collections.Counter = collections.Counter()
    example = {}
    programs = generate(a.n, a.seed, device=gen_device)
    for p in programs:
        err = run_eager(p, device=a.device).error
        if err is None:
            continue
        key = f"{type(err).__name__}: {(str(err).splitlines() or [''])[0][:160]}"
        counts[key] += 1
        if key not in example or len(p.body) < len(example[key].body):
            example[key] = p
    bad = sum(counts.values())
    print(f"{a.n} programs for {a.device}: eager raised on {bad} ({100 * bad / a.n:.2f} %)")
    for key, n in counts.most_common():
        print(f"\n{n:5d}  {key}\n{render_module(example[key]).source}")


if __name__ == "__main__":
    main()
