"""Throughput of the pipeline adapters and coverage of the decision capture.

Runs N generated programs (:func:`aliasfuzz.fuzz.sample.generate`, deterministic per seed)
through each pipeline and prints, per pipeline, one line:

    pipeline  programs  prog/s(wall)  prog/s(cpu)  median_ms  failures  value/alias mismatches  candidates  captured

* ``prog/s``: programs divided by the wall time, and by the process CPU time (one torch
  thread: the one-core figure, robust to a loaded machine), of ``run_pipeline`` calls
  (render, trace, pass, run), after one warm-up program per pipeline. The CPU figure of
  ``inductor*`` leaves out its C++ compiler subprocesses: use the wall figure there.
* ``value mismatches``: successful runs whose outputs / inputs after the call differ from
  eager (rtol 1e-4, atol 1e-5); ``alias mismatches``: runs whose output/input aliasing
  differs (``fx-reinplace``'s ``functionalize`` front end never returns views of inputs).
  Both are data for the oracle, not harness errors.
* ``stmt``: share of decisions mapped back to a program statement.
* ``candidates``: candidate nodes found by an independent scan of ``graph_before`` (targets
  the pass handles); ``captured``: the share of them with a decision read
  (``Decision.reinplaced`` not None for every mutated argument).

Usage: ``python bench/pipelines.py [-n 200] [--seed 0] [--pipelines a,b] [--threads 1]``.
Goals (issue 3): inductor-reinplace >= 20 programs/s on one core; captured >= 95 %.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter

import torch

from aliasfuzz.fuzz.eager import make_inputs, run_eager
from aliasfuzz.fuzz.sample import generate
from aliasfuzz.passes import PIPELINES, run_pipeline
from aliasfuzz.passes.cases import same_value

_WITH_PASS = ("inductor", "inductor-reinplace", "fx-reinplace")


def _candidate_targets():
    import torch._inductor.fx_passes.reinplace as rp

    hop = torch.ops.higher_order
    targets = {
        hop.auto_functionalized,
        hop.auto_functionalized_v2,
        rp.triton_kernel_wrapper_functional,
    }
    targets |= {t for t in rp.inplaceable_ops if t is not rp._generalized_scatter}
    targets |= set(rp.inplaceable_foreach_ops) | set(rp._SCATTER_OP_TO_VIEW)
    return targets


def _candidate_nodes(ex, fx: bool) -> set[str]:
    """Names of candidate nodes in the graph(s) the pass saw, by an independent scan."""
    graphs = ex.extra.get("graphs_before") or ([ex.graph_before] if ex.graph_before else [])
    names: set[str] = set()
    if fx:
        from torch.fx.passes.reinplace import _maybe_get_inplace_op

        for gm in graphs:
            for n in gm.graph.nodes:
                if n.op == "call_function" and _maybe_get_inplace_op(n.target) is not None:
                    if n.args and isinstance(n.args[0], torch.fx.Node):
                        names.add(n.name)
        return names
    targets = _candidate_targets()
    for gm in graphs:
        for n in gm.graph.nodes:
            if n.op == "call_function" and n.target in targets:
                names.add(n.name)
    return names


def _mismatch(ex, ref) -> tuple[bool, bool]:
    """(values differ, aliasing differs) between a run and eager."""
    if ref.error is not None:
        return False, False
    pairs = [
        *zip(ex.outputs, ref.outputs, strict=False),
        *zip(ex.inputs_after, ref.inputs_after, strict=False),
    ]
    values = len(ex.outputs) != len(ref.outputs) or any(same_value(a, b) for a, b in pairs)
    return values, ex.aliases != ref.aliases


def bench(name: str, programs) -> dict:
    run_pipeline(name, programs[0], make_inputs(programs[0]))  # warm-up
    times, cpu, failures, mismatches = [], 0.0, Counter(), [0, 0]
    n_cand = n_captured = n_dec = n_stmt = 0
    for p in programs:
        inputs = make_inputs(p)
        c, t = time.process_time(), time.perf_counter()
        ex = run_pipeline(name, p, inputs)
        times.append(time.perf_counter() - t)
        cpu += time.process_time() - c
        if ex.failure is not None:
            failures[ex.failure.stage] += 1
        else:
            values, aliases = _mismatch(ex, run_eager(p))
            mismatches[0] += values
            mismatches[1] += aliases
        cands = _candidate_nodes(ex, fx=name == "fx-reinplace")
        n_dec += len(ex.decisions)
        n_stmt += sum(d.statement is not None for d in ex.decisions)
        by_node: dict[str, list] = {}
        for d in ex.decisions:
            by_node.setdefault(d.node, []).append(d)
        n_cand += len(cands)
        n_captured += sum(
            1 for c in cands if by_node.get(c) and all(d.captured for d in by_node[c])
        )
    total = sum(times)
    return {
        "pipeline": name,
        "programs": len(programs),
        "per_s": len(programs) / total,
        "per_cpu_s": len(programs) / cpu,
        "median_ms": 1000 * statistics.median(times),
        "failures": dict(failures),
        "mismatches": mismatches,
        "candidates": n_cand if name in _WITH_PASS else None,
        "captured": n_captured / n_cand if n_cand else 1.0,
        "stmt": n_stmt / n_dec if n_dec else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pipelines", default="inductor-reinplace,fx-reinplace,aot_eager,eager")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    names = [s for s in args.pipelines.split(",") if s]
    for s in names:
        if s not in PIPELINES:
            ap.error(f"unknown pipeline {s!r} (one of: {', '.join(PIPELINES)})")
    programs = generate(args.n, seed=args.seed)
    print(
        f"# {len(programs)} programs, seed {args.seed}, torch {torch.__version__}, threads {args.threads}"
    )
    print(
        "pipeline              programs  prog/s(wall)  prog/s(cpu)  median_ms  failures"
        "              value/alias mismatches  candidates  captured   stmt"
    )
    for name in names:
        r = bench(name, programs)
        cand = "-" if r["candidates"] is None else str(r["candidates"])
        captured = "-" if r["candidates"] is None else f"{100 * r['captured']:.1f}%"
        mm = f"{r['mismatches'][0]}/{r['mismatches'][1]}"
        stmt = "-" if r["stmt"] is None else f"{100 * r['stmt']:.1f}%"
        print(
            f"{r['pipeline']:<21} {r['programs']:>8} {r['per_s']:>13.1f} {r['per_cpu_s']:>12.1f} "
            f"{r['median_ms']:>10.1f}  {str(r['failures']):<21} {mm:>22} {cand:>11} {captured:>9} {stmt:>6}",
            flush=True,
        )


if __name__ == "__main__":
    main()
