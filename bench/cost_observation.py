"""Cost of the cost observation: :func:`aliasfuzz.passes.cost.graph_cost` per ``inductor`` run.

Runs N generated programs (:func:`aliasfuzz.fuzz.sample.generate`, deterministic per seed)
through the full ``inductor`` pipeline (which records each lowered graph's
:class:`~aliasfuzz.passes.cost.GraphCost` into ``Execution.cost``) and times, inside the same
runs, the accounting itself (``graph_cost``: the loop-extent bytes, Inductor's
``count_bytes`` for reference, the temporaries). Prints, per program and in total, the
accounting's seconds against the whole ``run_pipeline`` call:

    programs  graphs  inductor_s(median)  cost_ms(median)  share(median)  share(total)

Goal (issue 14): the observation costs at most 10 % of the ``inductor`` run.
Usage: ``python bench/cost_observation.py [-n 30] [--seed 0]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from aliasfuzz.fuzz.eager import make_inputs
from aliasfuzz.fuzz.sample import generate
from aliasfuzz.passes import cost as cost_mod
from aliasfuzz.passes import run_pipeline


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    spent = [0.0]
    original = cost_mod.graph_cost

    def timed(graph):
        t = time.perf_counter()
        try:
            return original(graph)
        finally:
            spent[0] += time.perf_counter() - t

    cost_mod.graph_cost = timed
    runs, shares, graphs = [], [], 0
    programs = list(generate(args.n + 1, seed=args.seed))
    for i, program in enumerate(programs):
        spent[0] = 0.0
        t = time.perf_counter()
        ex = run_pipeline("inductor", program, make_inputs(program, "cpu"))
        wall = time.perf_counter() - t
        if i == 0 or not ex.cost:  # warm-up, or nothing lowered (a failure, no graph)
            continue
        graphs += len(ex.cost)
        runs.append((wall, spent[0]))
        shares.append(spent[0] / wall)
    walls, costs = [w for w, _ in runs], [c for _, c in runs]
    print("programs  graphs  inductor_s(median)  cost_ms(median)  share(median)  share(total)")
    print(f"{len(runs):8d}  {graphs:6d}  {statistics.median(walls):18.3f}  "
          f"{1000 * statistics.median(costs):15.2f}  {100 * statistics.median(shares):12.2f}%  "
          f"{100 * sum(costs) / sum(walls):11.2f}%")


if __name__ == "__main__":
    main()
