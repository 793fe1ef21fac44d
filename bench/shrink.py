"""Minimizers compared on the findings of a campaign: the shrinker's moves, former minimizers.

Usage: ``python bench/shrink.py [--programs 40] [--seed 0] [--pipelines a,b] [--budget 40]
[--workers 2] [--minimizers a,b] [--out FILE.json] [--cache FILE.json]``.

First a campaign without shrinking (``run_campaign(shrink=False)``, default pipelines) picks
the findings the driver would shrink: one per pre-shrink signature. Then each finding is
minimized by each of ``--minimizers``, every candidate run on the finding's pipeline in an
isolated :class:`~aliasfuzz.campaign.worker.Worker`:

* ``moves``: :func:`aliasfuzz.campaign.shrink.shrink` (drop, bypass, canonical rewrite,
  un-alias, densify, drop ``requires_grad``; the inputs' choices drawn before the outputs'
  and statements'; a node of n > 2 options drawn as n - 1 booleans);
* ``moves-integers``: the same, a node of more than two options drawn as one integer;
* ``no-canonical``: the shrinker before the canonical rewrite (its moves, a node of three
  options one integer);
* ``moves-body-first``: ``moves`` with the inputs' choices drawn last;
* ``drop-only``: the shrinker before the bypass and input moves (kept here, verbatim: keep or
  drop each output and statement);
* ``ddmin``: the statement-deletion delta debugger the campaign used before Hypothesis;
* ``hypothesis+ddmin``: ``moves``, then ``ddmin`` from its result with what is left of the
  budget (does a delta-debugging pass after the shrinker still help?).

Outcomes are cached per (program, pipeline) across minimizers, so a candidate runs once, but
each minimizer is charged every candidate it asks for, as in a campaign. ``--cache FILE``
keeps the findings and that outcome cache between runs (for comparing minimizer variants
on the same outcomes; delete it after changing torch or the oracle). Prints one line per
finding and, per minimizer: the median and total of minimized statements and executions,
how many findings end with at most 2 statements, the moves in the results (statements
bypassed, i.e. gone while a later statement that used them stayed; inputs given their own
storage or densified; ``requires_grad`` dropped), the aliased and strided inputs left
(inputs sharing a storage with another; inputs non-contiguous or at an offset), and the
number of distinct ``needed_features`` among the findings, over all and per (pipeline,
verdict, check class) as the corpus keys them (fewer: fewer entries for one bug).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from aliasfuzz.campaign import shrink as shrink_mod
from aliasfuzz.campaign.driver import run_campaign
from aliasfuzz.campaign.options import CampaignOptions
from aliasfuzz.campaign.shrink import (
    is_valid,
    reduce_program,
    same_failure,
    shrink,
    without_statement,
)
from aliasfuzz.campaign.worker import Worker
from aliasfuzz.fuzz.ir import Program, contiguous_strides


def ddmin(program: Program, outcome: dict[str, Any], evaluate, budget: int):
    """The campaign's minimizer before Hypothesis: delete one statement (back to front) or
    output at a time, to a fixpoint; ``(smallest, its outcome, executions spent)``."""
    best, best_out, spent = program, outcome, 0

    def attempt(candidate: Program) -> bool:
        nonlocal best, best_out, spent
        if spent >= budget or not is_valid(candidate):
            return False
        spent += 1
        out = evaluate(candidate)
        if same_failure(outcome, out):
            best, best_out = candidate, out
            return True
        return False

    changed = True
    while changed and spent < budget:
        changed = False
        for i in reversed(range(len(best.body))):
            if i < len(best.body) and attempt(without_statement(best, i)):
                changed = True
        for o in reversed(best.outputs):
            outs = tuple(x for x in best.outputs if x != o)
            if attempt(best.with_body(best.body, outs)):
                changed = True
    return best, best_out, spent


def drop_only(program: Program, outcome: dict[str, Any], evaluate, budget: int):
    """The shrinker before bypass and the input moves: one boolean per output, then one per
    statement from the last to the first (keep, or drop with its dependents)."""
    from hypothesis import reject
    from hypothesis import strategies as st

    n = len(program.body)

    @st.composite
    def _reduced(draw) -> Program:
        keep_outputs = [draw(st.booleans()) for _ in program.outputs]
        keep = [draw(st.booleans()) for _ in range(n)][::-1]
        candidate = reduce_program(program, keep, keep_outputs)
        if not is_valid(candidate):
            reject()
        return candidate

    strategy = _reduced() if n + len(program.outputs) else st.just(program).filter(is_valid)
    everything = [True] * (n + len(program.outputs))
    return shrink_mod._minimize(program, outcome, evaluate, budget, strategy, everything)


def _variant(**plan_kw):
    """:func:`shrink` with :func:`~aliasfuzz.campaign.shrink._plan` given ``plan_kw``."""

    def minimize(program: Program, outcome: dict[str, Any], evaluate, budget: int):
        plan = shrink_mod._plan(program, **plan_kw)
        strategy = shrink_mod._strategy(program, plan)
        return shrink_mod._minimize(
            program, outcome, evaluate, budget, strategy, plan.keep_everything()
        )

    return minimize


def _strided(t) -> bool:
    row_major = contiguous_strides(t.shape)
    return t.offset != 0 or any(
        n > 1 and s != c for n, s, c in zip(t.shape, t.stride, row_major, strict=True)
    )


def _input_counts(p: Program) -> tuple[int, int]:
    """(inputs sharing a storage with another input, strided inputs)."""
    live = [t for t in p.inputs if not t.none]
    per_storage = {}
    for t in live:
        per_storage[t.storage] = per_storage.get(t.storage, 0) + 1
    return sum(per_storage[t.storage] > 1 for t in live), sum(_strided(t) for t in live)


def _moves(original: Program, small: Program) -> dict[str, int]:
    """The moves that turned ``original`` into ``small``, read off the two programs.

    A statement binding names is bypassed when it is gone but a later statement using one
    of its names stayed (or was bypassed too); statements that bind nothing count as
    dropped. Outputs renamed by a bypass are not seen, so bypasses are a lower bound.
    """
    named = {op.out for op in small.body if op.out}
    present = [bool(op.out) and op.out in named for op in original.body]
    bypassed = [False] * len(original.body)
    for i in reversed(range(len(original.body))):
        op = original.body[i]
        if op.out and not present[i]:
            users = [
                j
                for j in range(i + 1, len(original.body))
                if set(op.out) & set(original.body[j].args)
            ]
            bypassed[i] = any(present[j] or bypassed[j] for j in users)
    after = {t.name: t for t in small.inputs}
    moved = [(t, after[t.name]) for t in original.inputs if t.name in after]
    relaid = [(a.stride, a.offset) != (b.stride, b.offset) for a, b in moved]
    return {
        "bypassed": sum(bypassed),
        "own_storage": sum(
            a.storage != b.storage and not r for (a, b), r in zip(moved, relaid, strict=True)
        ),
        "densified": sum(relaid),
        "grad_dropped": sum(a.requires_grad and not b.requires_grad for a, b in moved),
    }


def _findings(args, tmp: Path) -> list[tuple[str, Program, dict[str, Any]]]:
    opts = CampaignOptions(
        programs=args.programs,
        seed=args.seed,
        workers=args.workers,
        corpus=str(tmp / "corpus"),
        state=str(tmp / "state"),
        report="none",
        shrink=False,
        **({"pipelines": tuple(args.pipelines.split(","))} if args.pipelines else {}),
    )
    res = run_campaign(opts.validate(), show=False)
    events = [json.loads(x) for x in (res.dir / "journal.jsonl").read_text().splitlines()]
    tasks = {(e["i"], e["pipeline"]): e for e in events if e["t"] == "task"}
    out = []
    for e in events:
        if e["t"] == "finding" and e.get("id"):
            t = tasks[(e["i"], e["pipeline"])]
            out.append((e["pipeline"], Program.from_json(t["program"]), t["outcome"]))
    return out


class _Runner:
    """Cached, thread-safe evaluation on per-thread workers."""

    def __init__(self, root: Path, timeout: float):
        self.root, self.timeout = root, timeout
        self.cache: dict[tuple[str, str], dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.local = threading.local()
        self.workers: list[Worker] = []
        self.executions = 0

    def _worker(self) -> Worker:
        if not hasattr(self.local, "w"):
            with self.lock:
                w = Worker(self.root / f"w{len(self.workers)}", timeout=self.timeout, recycle=200)
                self.workers.append(w)
            self.local.w = w
        return self.local.w

    def evaluate(self, program: Program, pipeline: str) -> dict[str, Any]:
        key = (program.dumps(), pipeline)
        with self.lock:
            if key in self.cache:
                return self.cache[key]
        task = {"program": program.to_json(), "pipeline": pipeline, "device": "cpu"}
        out = self._worker().run(task)
        with self.lock:
            self.executions += 1
            self.cache[key] = out
        return out

    def close(self) -> None:
        for w in self.workers:
            w.close()


def _moves_then_dd(program, outcome, evaluate, budget):
    small, out, spent = shrink(program, outcome, evaluate, budget)
    if small == program:  # not reproduced (or not shrunk): ddmin starts from the original
        return small, out, spent
    small2, out2, spent2 = ddmin(small, out, evaluate, budget - spent)
    return small2, out2, spent + spent2


def _cache_id(args) -> list:
    return [args.seed, args.programs, args.pipelines]


def _load_cache(args) -> dict[str, Any] | None:
    if not args.cache or not Path(args.cache).exists():
        return None
    cache = json.loads(Path(args.cache).read_text())
    return cache if cache.get("id") == _cache_id(args) else None


def _save_cache(args, findings, outcomes) -> None:
    Path(args.cache).write_text(
        json.dumps(
            {
                "id": _cache_id(args),
                "findings": [(p, x.to_json(), o) for p, x, o in findings],
                "outcomes": {json.dumps(list(k)): v for k, v in outcomes.items()},
            }
        )
    )


MINIMIZERS = {
    "moves": shrink,
    "moves-integers": _variant(encoding="integers"),
    "no-canonical": _variant(canonical=False, encoding="integers"),
    "moves-body-first": _variant(body_first=True),
    "drop-only": drop_only,
    "ddmin": ddmin,
    "hypothesis+ddmin": _moves_then_dd,
}
DEFAULT_MINIMIZERS = "moves,moves-integers,no-canonical"


def _input_summary(rows, name) -> str:
    counts = [r["inputs"] if name is None else r[name]["inputs"] for r in rows]
    aliased = sum(a for a, _ in counts)
    strided = sum(s for _, s in counts)
    return (
        f"{aliased} aliased inputs in {sum(a > 0 for a, _ in counts)} findings, "
        f"{strided} strided inputs in {sum(s > 0 for _, s in counts)} findings"
    )


def _summary(name: str, rows) -> None:
    st = [r[name]["statements"] for r in rows]
    ex = [r[name]["executions"] for r in rows]
    moves = {k: sum(r[name]["moves"][k] for r in rows) for k in rows[0][name]["moves"]}
    print(
        f"{name}: median {statistics.median(st)} statements (total {sum(st)}, "
        f"{sum(x <= 2 for x in st)}/{len(st)} at <= 2), median {statistics.median(ex)} "
        f"executions (total {sum(ex)}, max {max(ex)}); "
        + ", ".join(f"{k} {v}" for k, v in moves.items())
        + f"; left: {_input_summary(rows, name)}; {_feature_summary(rows, name)}"
    )


def _feature_summary(rows, name) -> str:
    """Distinct ``needed_features`` over the findings, and summed over the groups of one
    (pipeline, verdict, check class) (what the corpus key adds to them)."""
    from aliasfuzz.oracle.differential import check_class

    def key(r):
        return json.dumps(r[name]["features"], sort_keys=True)

    groups = {}
    for r in rows:
        groups.setdefault((r["pipeline"], r["verdict"], check_class(r["check"])), set()).add(key(r))
    return (
        f"{len({key(r) for r in rows})} distinct needed_features, "
        f"{sum(len(g) for g in groups.values())} over (pipeline, verdict, check)"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pipelines", default=None, help="comma list (campaign default)")
    ap.add_argument("--budget", type=int, default=40, help="executions per shrink (40)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument(
        "--minimizers", default=DEFAULT_MINIMIZERS, help=f"comma list of {', '.join(MINIMIZERS)}"
    )
    ap.add_argument("--out", help="write the per-finding rows as JSON here")
    ap.add_argument("--cache", help="findings and outcomes kept between runs (JSON)")
    args = ap.parse_args(argv)
    names = args.minimizers.split(",")
    if not set(names) <= set(MINIMIZERS):
        ap.error(f"unknown minimizers {sorted(set(names) - set(MINIMIZERS))}")
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        cache = _load_cache(args)
        if cache is None:
            findings = _findings(args, tmp)
        else:
            findings = [(p, Program.from_json(x), o) for p, x, o in cache["findings"]]
        print(f"{len(findings)} findings to shrink (seed {args.seed}, {args.programs} programs)")
        runner = _Runner(tmp / "bench-workers", args.timeout)
        if cache is not None:
            runner.cache = {tuple(json.loads(k)): v for k, v in cache["outcomes"].items()}

        def one(f):
            pipeline, program, outcome = f
            row = {
                "pipeline": pipeline,
                "verdict": outcome["verdict"],
                "check": outcome.get("check"),
                "original": len(program.body),
                "inputs": _input_counts(program),
            }
            for name in names:
                small, _, spent = MINIMIZERS[name](
                    program, outcome, lambda p, pl=pipeline: runner.evaluate(p, pl), args.budget
                )
                row[name] = {
                    "statements": len(small.body),
                    "executions": spent,
                    "inputs": _input_counts(small),
                    "moves": _moves(program, small),
                    "features": shrink_mod.needed_features(small),
                }
            return row

        try:
            with ThreadPoolExecutor(args.workers) as ex:
                rows = list(ex.map(one, findings))
        finally:
            runner.close()
            if args.cache:
                _save_cache(args, findings, runner.cache)
    for r in rows:
        cells = "  ".join(
            f"{n}: {r[n]['statements']} st / {r[n]['executions']} ex "
            f"/ {r[n]['inputs'][0]}a{r[n]['inputs'][1]}s"
            for n in names
        )
        print(
            f"{r['pipeline']:<20} {r['verdict']:<17} {str(r['check']):<12} "
            f"{r['original']} st {r['inputs'][0]}a{r['inputs'][1]}s  {cells}"
        )
    if rows:
        print(f"(NaMs: N aliased and M strided inputs) originals: {_input_summary(rows, None)}")
    for n in names:
        if rows:
            _summary(n, rows)
    print(f"distinct candidates run: {runner.executions}")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
