"""A campaign-like loop of random programs through the ``torchscript`` pipeline.

Usage: ``python bench/torchscript.py [--seconds 60] [--seed 0] [--device cpu] [--out DIR]``.

Programs come from :func:`aliasfuzz.fuzz.sample.generate` (deterministic per seed and
index). Each one is given a TorchScript flavour, decided by a RNG seeded from the same
(seed, index): with ``--grad-prob`` its float inputs that no statement writes (through any
alias) get ``requires_grad`` (gradients of a scalar loss are then compared), and with
``--optional-prob`` an extra ``Optional[Tensor]`` input is appended, ``None`` on even
calls and a tensor on odd ones. Every program runs through
:func:`aliasfuzz.passes.torchscript.run_torchscript` and is judged by
:func:`aliasfuzz.oracle.ts_invariants.judge`.

Prints, one per line: programs, seconds, programs/s, verdict counts, unscriptable reasons,
graph coverage (optimized graphs holding a TensorExpr group / differentiable graph),
findings per known root cause (:data:`KNOWN_CAUSES`; ``new`` for the rest) and each
finding (index, verdict, explanation). With ``--out`` each finding's program JSON is
written to ``DIR/<verdict>-<seed>-<index>.json``. Exit code 0 (findings are data).
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.sample import generate_one
from aliasfuzz.fuzz.validate import infer
from aliasfuzz.oracle.ts_invariants import judge, sites
from aliasfuzz.passes.torchscript import run_torchscript

# "custom" programs are all rejected as unscriptable (cheaply); add it to see the counts.
FAMILIES = ("view", "functional", "inplace", "out", "scatter", "control")
FLOATS = ("float32", "float64", "float16", "bfloat16")


_TAIL_OPS = ("sin", "mul.Scalar", "add", "add_.Scalar", "clone", "add.Scalar")


def elementwise_tail(program: Program, rng: random.Random, k: int) -> Program:
    """Append up to ``k`` elementwise statements on float values, and return some of them.

    The generator has no rows for the elementwise ops yet; these statements give the
    TensorExpr fuser something to fuse next to the generated views and in-place ops.
    Statements that fail validation are dropped.
    """
    body, outputs = list(program.body), list(program.outputs)
    for j in range(k):
        values = {
            n: m
            for n, m in infer(program.with_body(tuple(body), tuple(outputs))).values.items()
            if m is not None and m.is_float and m.numel > 0
        }
        if not values:
            break
        op = rng.choice(_TAIL_OPS)
        x = rng.choice(sorted(values))
        args = (x,)
        if op == "add":
            same = sorted(n for n, m in values.items() if m.shape == values[x].shape)
            args = (x, rng.choice(same))
        params = {"other": rng.choice((0.5, 2.0, -1.0))} if op.endswith(".Scalar") else {}
        stmt = Op(op, args, params, (f"e{j}",))
        try:
            infer(program.with_body((*body, stmt), tuple(outputs)))
        except InvalidArgument:
            continue
        body.append(stmt)
        if rng.random() < 0.4:
            outputs.append(stmt.out[0])
    if body and body[-1].out and body[-1].out[0] not in outputs:
        outputs.append(body[-1].out[0])
    return program.with_body(tuple(body), tuple(outputs))


def flavour(
    program: Program, rng: random.Random, grad_prob: float, optional_prob: float
) -> Program:
    """The program with ``requires_grad`` on unwritten float inputs and/or an Optional input."""
    typed = infer(program)
    written = {w.storage for s in typed.steps for w in s.opdef.written(s.args, s.op.params)}
    dtypes = {s.name: s.dtype for s in program.storages}
    inputs = list(program.inputs)
    storages = list(program.storages)
    if rng.random() < grad_prob:
        inputs = [
            replace(t, requires_grad=True)
            if dtypes[t.storage] in FLOATS and t.storage not in written and not t.none
            else t
            for t in inputs
        ]
    if rng.random() < optional_prob:
        storages.append(StorageSpec("s_opt", 4, "float32", "randn", {"seed": rng.randrange(99)}))
        inputs.append(TensorSpec("opt", "s_opt", (4,), (1,), optional=True, none=True))
    return Program(
        tuple(storages), tuple(inputs), program.body, program.outputs, dict(program.meta)
    )


#: Root causes already diagnosed on torch 2.13 CPU (see the helper's report / closing note),
#: as (name, test on the program's op names and the explanation). The first match wins;
#: "new" means none matched: look at those first.
KNOWN_CAUSES = (
    (
        "setitem source with extra leading size-1 dims (eager strips them, TorchScript raises)",
        lambda ops, why: "doesn't match the broadcast shape" in why,
    ),
    (
        "Python bool scalar typed as int in TorchScript (bool tensor op gives int64 or raises)",
        lambda ops, why: "Long can't be cast" in why or ("torch.bool" in why and "int64" in why),
    ),
    (
        "in-place foreach on a list literal dropped by TorchScript dead-code elimination",
        lambda ops, why: any(o.startswith("_foreach") for o in ops),
    ),
    (
        "eval-mode dropout returns its input but its schema says fresh: writes through it lost",
        lambda ops, why: "dropout_eval" in ops and "differ" in why,
    ),
    (
        "equal constant tensors pooled into one (case b23, PyTorch #75794): outputs alias",
        lambda ops, why: "aliasing:" in why,
    ),
    (
        "legacy executor sets requires_grad on outputs/inputs (case b25, PyTorch #126277)",
        lambda ops, why: why.startswith("legacy") and "eager False, torchscript True" in why,
    ),
    (
        "legacy executor: out= op inside a differentiable graph raises",
        lambda ops, why: (
            why.startswith("legacy") and "don't support automatic differentiation" in why
        ),
    ),
    (
        "legacy fuser: CUDA kernel fails to compile (NVRTC)",
        lambda ops, why: "errors detected in the compilation of" in why,
    ),
    (
        "legacy executor: autograd errors from grad it attached (b25 family)",
        lambda ops, why: (
            why.startswith("legacy")
            and any(
                m in why
                for m in (
                    "Autograd not support dtype",
                    "requires grad is being used in an in-place",
                    "is being modified inplace",
                )
            )
        ),
    ),
    (
        "profiling executor: grad specialization left unguarded (list input)",
        lambda ops, why: (
            "fusion_guarded" in why
            or (why.startswith("profiling") and "eager False, torchscript True" in why)
        ),
    ),
    (
        "legacy executor: internal error 'Argument passed to at() was not in the map'",
        lambda ops, why: "at() was not in the map" in why,
    ),
)


def classify(program: Program, why: str) -> str:
    """The name of the known root cause a finding matches, or ``"new"``."""
    ops = {op.op for op in program.body}
    return next((name for name, test in KNOWN_CAUSES if test(ops, why)), "new")


def _coverage(ex, cov: collections.Counter) -> None:
    for r in ex.extra.get("calls", []):
        if r.phase != "optimized" or r.graph is None:
            continue
        kinds = {s.node.kind() for s in sites(r.graph)}
        cov["optimized graphs"] += 1
        cov["with TensorExprGroup"] += "prim::TensorExprGroup" in kinds
        cov["with DifferentiableGraph"] += "prim::DifferentiableGraph" in kinds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--dtypes", default="float32,float64,int64")
    ap.add_argument("--max-statements", type=int, default=12)
    ap.add_argument("--tail", type=int, default=6, help="max elementwise statements appended")
    ap.add_argument("--grad-prob", type=float, default=0.4)
    ap.add_argument("--optional-prob", type=float, default=0.3)
    ap.add_argument("--num-profiled-runs", type=int, default=1)
    ap.add_argument("--calls", type=int, default=None)
    ap.add_argument("--fuser", type=int, default=1, help="1: TensorExpr fuser on (default)")
    ap.add_argument("--max-programs", type=int, default=None)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    opts = {
        "num_profiled_runs": args.num_profiled_runs,
        "calls": args.calls,
        "fuser": bool(args.fuser),
    }
    gen_opts = {
        "families": tuple(args.families.split(",")),
        "dtypes": tuple(args.dtypes.split(",")),
        "device": args.device,
        "max_statements": args.max_statements,
    }
    verdicts: collections.Counter = collections.Counter()
    reasons: collections.Counter = collections.Counter()
    cov: collections.Counter = collections.Counter()
    causes: collections.Counter = collections.Counter()
    findings = []
    start = time.perf_counter()
    i = 0
    while time.perf_counter() - start < args.seconds and (
        args.max_programs is None or i < args.max_programs
    ):
        rng = random.Random(f"ts-flavour:{args.seed}:{i}")
        program = generate_one(args.seed, i, **gen_opts)
        program = elementwise_tail(program, rng, rng.randint(0, args.tail))
        program = flavour(program, rng, args.grad_prob, args.optional_prob)
        ex = run_torchscript(program, None, args.device, opts)
        verdict, why = judge(ex)
        verdicts[verdict.value] += 1
        if "rejected" in ex.extra:
            reasons[ex.extra["rejected"].split(": ", 1)[-1].split(" (")[0]] += 1
        _coverage(ex, cov)
        if verdict.is_finding:
            causes[classify(program, why)] += 1
            findings.append((i, verdict.value, why))
            if args.out is not None:
                args.out.mkdir(parents=True, exist_ok=True)
                path = args.out / f"{verdict.value}-{args.seed}-{i}.json"
                path.write_text(
                    json.dumps({"explanation": why, "program": program.to_json()}, indent=1)
                )
        i += 1
    secs = time.perf_counter() - start
    print(f"programs {i}")
    print(f"seconds {secs:.1f}")
    print(f"programs/s {i / secs:.2f}")
    print("verdicts " + ", ".join(f"{k}={v}" for k, v in verdicts.most_common()))
    print("unscriptable " + (", ".join(f"{k!r}={v}" for k, v in reasons.most_common()) or "none"))
    print("coverage " + ", ".join(f"{k}={v}" for k, v in cov.items()))
    print(f"findings {len(findings)}")
    for name, n in causes.most_common():
        print(f"cause {n} {name}")
    for idx, v, why in findings:
        print(f"finding seed={args.seed} index={idx} {v}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
