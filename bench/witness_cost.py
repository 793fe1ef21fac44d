"""Cost of issue 14's judgement beyond the ``inductor`` run: the lower bound and the witnesses.

Judges N generated programs (:func:`aliasfuzz.fuzz.sample.generate`, deterministic per seed)
on the full ``inductor`` pipeline (:func:`aliasfuzz.oracle.judge.judge`) and reads, per
program, the seconds of each stage (:mod:`aliasfuzz.fuzz.costs`): the ``inductor`` run
(trace, compile, run) against ``oracle.witness`` (the equivalent spellings of
:mod:`aliasfuzz.oracle.witness`: their compiles, gated by :func:`~aliasfuzz.oracle.witness.gate`).
Prints the totals, the share of the witnesses against the ``inductor`` run, how many
programs tried a rule and how many found a witness, by rule:

    programs  inductor_s  witness_s  share  tried  witnesses(by rule)

Goal (issue 14): the observation costs at most 10 % of the ``inductor`` run.
Usage: ``python bench/witness_cost.py [-n 40] [--seed 0]``.
"""

from __future__ import annotations

import argparse
from collections import Counter

import torch

from aliasfuzz.fuzz import costs
from aliasfuzz.fuzz.sample import generate
from aliasfuzz.oracle import judge as judge_mod
from aliasfuzz.oracle import witness


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    tried = [0]
    original = witness.find_witness

    def counted(*a, **k):
        tried[0] += 1
        return original(*a, **k)

    witness.find_witness = counted
    found: Counter = Counter()
    inductor = spent = 0.0
    programs = list(generate(args.n + 1, seed=args.seed))
    for i, program in enumerate(programs):
        costs.take()
        j = judge_mod.judge(program, "inductor")
        took = costs.take()
        if i == 0:  # warm-up
            tried[0] = 0
            continue
        inductor += sum(v for k, v in took.items() if k.startswith("inductor."))
        spent += took.get("oracle.witness", 0.0)
        if j.witness is not None:
            found[j.witness.rule] += 1
    print("programs  inductor_s  witness_s  share  tried  witnesses(by rule)")
    print(f"{args.n:8d}  {inductor:10.1f}  {spent:9.1f}  {100 * spent / max(inductor, 1e-9):4.1f}%  "
          f"{tried[0]:5d}  {dict(found) or '-'}")


if __name__ == "__main__":
    main()
