"""Does bundling programs amortize a compile's fixed cost? (issue 16, "measure first")

Generates programs ``0..N-1`` of ``--seed`` (:func:`aliasfuzz.campaign._judge.generate`,
as a campaign does) and compiles the ones that can be bundled simply in two arms,
alternated over ``--rounds``, each arm-run from empty Inductor caches
(:func:`bench.breadth_ab._fresh_kernels`):

* "one by one": each program's rendered function (:func:`aliasfuzz.fuzz.render.load_function`)
  under ``torch.compile`` with the Inductor backend after ``torch._dynamo.reset()``, as the
  pipelines compile it, called once on fresh inputs (then once more, to split the run
  from trace and compile);
* "bundled K" (``--bundle K``): K consecutive programs rendered into one function
  (:func:`bundle_source`: each member's inputs and locals renamed ``p<j>_<name>``, its
  inputs built from its own storages, so members share no memory; the function returns
  the tuple of every member's outputs), compiled once and called once (and once more).
  A bundle that fails (an exception) is then split in halves until each part compiles or
  is one program (compiled as one by one compiles it): the bisection's compiles are timed
  apart, and the verdicts after it compared with one by one's too.

The backend is Inductor's own (``torch._dynamo.lookup_backend("inductor")``) behind a thin
wrapper that counts graphs and times the backend call: ``trace`` is the first call less
the backend's time less the second call, ``compile`` the backend's time (AOTAutograd and
Inductor), ``run`` the second call. Per arm it prints seconds per program (median over the
rounds, and each round), the ratio, and per program whether its outputs and its inputs
after the call equal eager's (``torch.equal``; ``allclose`` with NaN equal on floating
dtypes): the count of programs whose verdict (equal / differs / fails) differs between
the arms is the risk bundling carries for "findings identical to one by one".

Programs left out, counted by reason: a user Triton kernel (``OpKind.TRITON``), a
graph break by construction (``OpKind.CONTROL``, ``torch.autograd.grad``) or one Dynamo
shows (``counters["graph_break"]`` under an eager backend, or not one graph), a failure of eager or of Dynamo alone,
eager results that differ between two runs (uninitialized memory: no reference to
compare with).

Last, the share of programs (all N, and those bundled) whose default-pipeline judgment is
entirely clean (every pipeline ``ok`` / ``unsupported``, :func:`bench.stages.judge_all`,
one capture per pipeline): only those would never need their bundle split again, so the
share bounds what bundling can save in a campaign.

Usage: ``PYTHONPATH=. python -m bench.bundle_cost [-n 16] [--bundle 4] [--rounds 2]
[--seed 0] [--no-judge]``.

Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
import tokenize
from collections import Counter
from typing import Any

import torch

from aliasfuzz.campaign import _judge
from aliasfuzz.campaign.options import DEFAULT_PIPELINES
from aliasfuzz.fuzz.eager import make_inputs
from aliasfuzz.fuzz.ir import Program
from aliasfuzz.fuzz.ops import OpKind, lookup
from aliasfuzz.fuzz.render import load_function, load_module, preludes_of, render_function_lines
from aliasfuzz.passes import hygiene
from bench.breadth_ab import _fresh_kernels
from bench.stages import judge_all

#: verdicts of the default pipelines that need no further look (no finding, no crash)
CLEAN = ("ok", "unsupported")


def static_reason(program: Program) -> str | None:
    """Why ``program`` cannot be bundled simply, from its ops alone, or None."""
    for op in program.body:
        d = lookup(op.op)
        if d.kind is OpKind.TRITON:
            return "triton kernel"
        if d.kind is OpKind.CONTROL or "graph_break" in d.tags or op.op == "autograd_grad":
            return "graph break by construction"
    return None


def _renamed(text: str, names: set[str], prefix: str) -> str:
    """``text`` (Python source) with each identifier of ``names`` prefixed, except
    attributes (after ``.``) and keyword-argument names (``name=`` inside brackets)."""
    toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    out, depth, prev = [], 0, None
    for i, tok in enumerate(toks):
        s = tok.string
        if tok.type == tokenize.OP and s in "([{":
            depth += 1
        elif tok.type == tokenize.OP and s in ")]}":
            depth -= 1
        if tok.type == tokenize.NAME and s in names and prev != ".":
            nxt = next((t for t in toks[i + 1:] if t.type not in (tokenize.NL, tokenize.COMMENT)), None)
            if not (depth > 0 and nxt is not None and nxt.string == "="):
                tok = tok._replace(string=prefix + s)
        out.append(tok)
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                            tokenize.COMMENT):
            prev = s
    return tokenize.untokenize(out)


def bundle_source(programs: list[Program]) -> str:
    """One module defining ``bundle(...)``: the members' bodies one after the other, member
    ``j``'s inputs and bound names prefixed ``p<j>_``, returning ``(outputs of member 0,
    outputs of member 1, ...)``. Its parameters: every member's inputs, in order."""
    params, body, rets, needed = [], [], [], {}
    for j, p in enumerate(programs):
        names = {t.name for t in p.inputs} | {n for op in p.body for n in op.out}
        lines = render_function_lines(p, "m")
        text = _renamed("\n".join(lines) + "\n", names, f"p{j}_")
        head, *rest = text.rstrip("\n").split("\n")
        ret = rest.pop()  # "    return (a, b,)" or "    return None"
        params.append(head[len("def m("):-len("):")])
        body += rest
        expr = ret.strip()[len("return "):]
        rets.append(expr)
        for name in preludes_of(p):
            needed.setdefault(name, None)
    src = ["from typing import Optional", "", "import torch", ""]
    if needed:
        src.append(f"from aliasfuzz.fuzz.preludes import {', '.join(needed)}  # noqa: F401")
    src += ["", "", f"def bundle({', '.join(x for x in params if x)}):", *body,
            f"    return ({', '.join(rets)},)", ""]
    return "\n".join(src)


def _flat(values: Any) -> list:
    if isinstance(values, tuple | list):
        return [v for x in values for v in _flat(x)]
    return [values]


def same(a: Any, b: Any) -> bool:
    """Equal results: tensors of one shape and dtype, ``torch.equal`` (``allclose`` with
    NaNs equal on floating and complex dtypes); other values by ``==``."""
    a, b = _flat(a), _flat(b)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
            return False
        if not isinstance(x, torch.Tensor):
            if x != y:
                return False
            continue
        x, y = x.detach(), y.detach()
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.is_floating_point() or x.is_complex():
            if not torch.allclose(x, y, equal_nan=True):
                return False
        elif not torch.equal(x, y):
            return False
    return True


def _eager(program: Program):
    fn, _ = load_function(program)
    inputs = make_inputs(program)
    out = fn(*inputs)
    return (out, inputs)


class _Counting:
    """A Dynamo backend: ``inner``'s, counting graphs and the seconds spent in it."""

    def __init__(self, inner) -> None:
        self.inner, self.graphs, self.seconds = inner, 0, 0.0

    def __call__(self, gm, example_inputs):
        t0 = time.perf_counter()
        self.graphs += 1
        try:
            return self.inner(gm, example_inputs)
        finally:
            self.seconds += time.perf_counter() - t0


def dynamic_reason(program: Program) -> tuple[str | None, Any]:
    """``(reason, eager result)``: why ``program`` is left out at run time (eager fails or
    is not deterministic, Dynamo alone fails or breaks the graph), or None."""
    try:
        ref, again = _eager(program), _eager(program)
    except Exception as e:  # noqa: BLE001 - a reason to count, not an error of the bench
        return f"eager fails ({type(e).__name__})", None
    if not same(ref, again):
        return "eager not deterministic", None
    from torch._dynamo.utils import counters

    hygiene.reset_program()
    counters.clear()
    eager_backend = _Counting(lambda gm, _: gm.forward)
    try:
        fn, _ = load_function(program)
        torch.compile(fn, backend=eager_backend)(*make_inputs(program))
    except Exception as e:  # noqa: BLE001
        return f"dynamo fails alone ({type(e).__name__})", None
    # a break before the last statements may leave one graph: count breaks, not graphs
    if counters["graph_break"]:
        first = next(iter(counters["graph_break"])).splitlines()[0][:60]
        return f"graph break under dynamo ({first})", None
    if eager_backend.graphs != 1:
        return f"{eager_backend.graphs} graphs under dynamo", None
    return None, ref


def _compiled(fn, inputs_of):
    """Compile ``fn`` with Inductor and call it twice: ``(seconds, graphs, first result or
    exception)``; seconds: load/trace/compile/run."""
    hygiene.reset_program()
    backend = _Counting(torch._dynamo.lookup_backend("inductor"))
    compiled = torch.compile(fn, backend=backend)
    inputs = inputs_of()
    t0 = time.perf_counter()
    try:
        out = (compiled(*inputs), inputs)
    except Exception as e:  # noqa: BLE001 - a failure is a result of the arm
        return {"trace": time.perf_counter() - t0 - backend.seconds,
                "compile": backend.seconds, "run": 0.0}, backend.graphs, e
    first = time.perf_counter() - t0
    inputs = inputs_of()
    t0 = time.perf_counter()
    try:
        compiled(*inputs)
    except Exception:  # noqa: BLE001 - the second call is only a clock
        pass
    run = time.perf_counter() - t0
    return {"trace": max(first - backend.seconds - run, 0.0), "compile": backend.seconds,
            "run": run}, backend.graphs, out


def _verdict(result: Any, ref: Any) -> str:
    if isinstance(result, Exception):
        return f"fails ({type(result).__name__})"
    return "equal" if same(result, ref) else "differs"


def one_by_one(programs: list[Program], refs: list) -> tuple[dict, list[str], int]:
    """``(seconds per stage, verdict per program, graphs)`` of compiling each alone."""
    secs, verdicts, graphs = Counter(), [], 0
    for p, ref in zip(programs, refs, strict=True):
        t0 = time.perf_counter()
        fn, _ = load_function(p)
        secs["load"] += time.perf_counter() - t0
        parts, g, out = _compiled(fn, lambda p=p: make_inputs(p))
        secs.update(parts)
        graphs += g
        verdicts.append(_verdict(out, ref))
    return secs, verdicts, graphs


def _group(members: list[Program], refs: list) -> tuple[dict, int, list[str]]:
    """``(seconds per stage, graphs, verdict per member)`` of one compiled function of
    ``members`` (a single program: its own rendering, as one by one compiles it)."""
    t0 = time.perf_counter()
    if len(members) == 1:
        fn, _ = load_function(members[0])
    else:
        fn = load_module(bundle_source(members), tag="bundle").bundle
    load = time.perf_counter() - t0

    def inputs_of():
        return tuple(x for p in members for x in make_inputs(p))

    parts, graphs, out = _compiled(fn, inputs_of)
    parts["load"] = load
    if isinstance(out, Exception):
        return parts, graphs, [_verdict(out, None)] * len(members)
    if len(members) == 1:
        return parts, graphs, [_verdict(out, refs[0])]
    result, inputs = out
    verdicts, at = [], 0
    for j, p in enumerate(members):
        mine = inputs[at:at + len(p.inputs)]
        at += len(p.inputs)
        verdicts.append(_verdict((result[j], mine), refs[j]))
    return parts, graphs, verdicts


def _bisected(members: list[Program], refs: list, tally: Counter) -> list[str]:
    """Verdicts of ``members`` after splitting a failed bundle in halves until each part
    compiles or is one program (the campaign's rule in issue 16); ``tally["compiles"]``
    counts the compiles."""
    _, _, verdicts = _group(members, refs)
    tally["compiles"] += 1
    if len(members) == 1 or not any(v.startswith("fails") for v in verdicts):
        return verdicts
    half = (len(members) + 1) // 2
    return (_bisected(members[:half], refs[:half], tally)
            + _bisected(members[half:], refs[half:], tally))


def bundled(programs: list[Program], refs: list, k: int) -> tuple[dict, list[str], int, dict]:
    """As :func:`one_by_one`, ``k`` consecutive programs per compiled function:
    ``(seconds per stage, verdict per program as its bundle gave it, graphs, split)``; a
    bundle that fails gives every member its failure. ``split``: the bisection of the
    failed bundles (:func:`_bisected`, not counted in the stages): ``seconds``,
    ``compiles``, ``bundles``, ``failed`` (bundles) and ``verdicts`` (per program, after
    it)."""
    secs, verdicts, graphs = Counter(), [], 0
    split = {"seconds": 0.0, "compiles": 0, "bundles": 0, "failed": 0, "verdicts": []}
    for s in range(0, len(programs), k):
        members, mine = programs[s:s + k], refs[s:s + k]
        parts, g, got = _group(members, mine)
        secs.update(parts)
        graphs += g
        verdicts += got
        split["bundles"] += 1
        if len(members) > 1 and any(v.startswith("fails") for v in got):
            split["failed"] += 1
            tally: Counter = Counter()
            t0 = time.perf_counter()
            half = (len(members) + 1) // 2
            got = (_bisected(members[:half], mine[:half], tally)
                   + _bisected(members[half:], mine[half:], tally))
            split["seconds"] += time.perf_counter() - t0
            split["compiles"] += tally["compiles"]
        split["verdicts"] += got
    return secs, verdicts, graphs, split


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--bundle", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-judge", action="store_true", help="skip the clean-share judging")
    args = ap.parse_args(argv)
    hygiene.setup_process()

    programs = [_judge.generate(args.seed, i) for i in range(args.n)]
    kept, refs, skipped = [], [], Counter()
    for p in programs:
        reason = static_reason(p)
        ref = None
        if reason is None:
            reason, ref = dynamic_reason(p)
        if reason is None:
            kept.append(p)
            refs.append(ref)
        else:
            skipped[reason] += 1
    grads = sum(any(t.requires_grad for t in p.inputs) for p in kept)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; seed {args.seed}, "
          f"{args.n} programs, {len(kept)} bundled ({grads} with an input requiring grad), "
          f"bundle {args.bundle}, {args.rounds} rounds")
    print("left out: " + (", ".join(f"{r}: {c}" for r, c in skipped.most_common()) or "none"))
    if not kept:
        return 0

    with _fresh_kernels():  # warm-up (imports, first compiles), not counted
        one_by_one(kept[:1], refs[:1])
        bundled(kept[:args.bundle], refs[:args.bundle], args.bundle)

    arms = {"one": lambda: (*one_by_one(kept, refs), None),
            "bundled": lambda: bundled(kept, refs, args.bundle)}
    runs: dict[str, list] = {"one": [], "bundled": []}
    for r in range(args.rounds):
        for name in (("one", "bundled") if r % 2 == 0 else ("bundled", "one")):
            with _fresh_kernels():
                t0 = time.perf_counter()
                secs, verdicts, graphs, split = arms[name]()
                wall = time.perf_counter() - t0 - (split["seconds"] if split else 0.0)
                runs[name].append((wall, secs, verdicts, graphs, split))

    n = len(kept)
    print(f"{'arm':<12} {'s/program':>9} {'load':>6} {'trace':>6} {'compile':>7} {'run':>6} "
          f"{'graphs':>6}  rounds (s/program)")
    med = {}
    for name, label in (("one", "one by one"), ("bundled", f"bundled {args.bundle}")):
        walls = [r[0] / n for r in runs[name]]
        med[name] = statistics.median(walls)
        parts = {k: statistics.median(r[1].get(k, 0.0) for r in runs[name]) / n
                 for k in ("load", "trace", "compile", "run")}
        print(f"{label:<12} {med[name]:>9.3f} {parts['load']:>6.3f} {parts['trace']:>6.3f} "
              f"{parts['compile']:>7.3f} {parts['run']:>6.3f} {runs[name][0][3]:>6}  "
              + " ".join(f"{w:.3f}" for w in walls))
    print(f"ratio bundled/one by one: {med['bundled'] / med['one']:.3f} (bundles as compiled, "
          "before any split)")
    splits = [r[4] for r in runs["bundled"]]
    with_split = statistics.median((r[0] + r[4]["seconds"]) / n for r in runs["bundled"])
    print(f"bundles failed: {splits[0]['failed']} of {splits[0]['bundles']}; bisecting them: "
          f"{splits[0]['compiles']} more compiles, "
          + " ".join(f"{sp['seconds']:.1f}" for sp in splits) + " s; "
          f"bundled with bisection {with_split:.3f} s/program, ratio {with_split / med['one']:.3f}")

    for name in ("one", "bundled"):
        c = Counter(runs[name][0][2])
        print(f"verdicts {name} (round 1): " + ", ".join(f"{v}: {k}" for v, k in c.most_common()))
    one_v = runs["one"][0][2]
    for label, other in (("as bundled", runs["bundled"][0][2]),
                         ("after bisection", splits[0]["verdicts"])):
        differs = [i for i, (a, b) in enumerate(zip(one_v, other, strict=True)) if a != b]
        print(f"correctness differs from one by one, {label}: {len(differs)} of {n}"
              + "".join(f"\n  program {programs.index(kept[i])}: one by one {one_v[i]}, "
                        f"bundled {other[i]}" for i in differs))
    unstable = sum(len({tuple(r[2]) for r in runs[name]}) > 1 for name in runs)
    print(f"arms whose verdicts changed between rounds: {unstable}")

    if args.no_judge:
        return 0
    with _fresh_kernels():
        clean = []
        for p in programs:
            outs = judge_all(p, DEFAULT_PIPELINES, "cpu", False)
            clean.append(all(o["verdict"] in CLEAN for o in outs.values()))
    kept_ids = {id(p) for p in kept}
    ck = sum(c for p, c in zip(programs, clean, strict=True) if id(p) in kept_ids)
    print(f"clean under every default pipeline: {sum(clean)} of {args.n} programs "
          f"({100 * sum(clean) / args.n:.0f}%), {ck} of the {n} bundled "
          f"({100 * ck / n:.0f}%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
