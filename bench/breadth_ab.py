"""Throughput with and without the breadth families (issue 15), same seed, one process.

``--arms grads`` compares instead the default generator with one that marks no input
``requires_grad`` (``grad_share=0``): the same ops and programs, only the gradient
observable differs (a backward per marked program and pipeline). ``--arms dynamic``
compares the campaign's default ``--dynamic-share`` (:class:`CampaignOptions`, 0.1: those
programs compiled with ``torch.compile(dynamic=True)`` on the ``torch.compile`` pipelines,
:func:`aliasfuzz.campaign.options.task_options`) with ``dynamic_share=0``: the same programs.

Judges programs ``0..N-1`` of ``--seed`` under the default pipelines (as
``bench/stages.py`` does: :func:`bench.stages.judge_all`, one capture per pipeline as the
default campaign), once with the
generator as it is ("with") and once with the rows of the breadth families' registry
modules (:data:`BREADTH`) hidden from the generator ("without": the generator of before
them), alternating the order over ``--rounds``. A warm-up program of each arm is judged
first and not counted. Each arm-run starts from empty Inductor caches
(:func:`_fresh_kernels`). Prints per arm the programs/s (generation and judging), the
generator's programs/s alone, and the ratio with/without.

Generation differs between the arms from the first draw that picks a family slot, so the
programs are not the same ones: the ratio measures the op mix, with its noise.

``--arms all`` compares the default campaign (every issue-15 family at its default share,
gradients, the default dynamic share) with the generator and campaign of before issue 15
(:func:`without_issue15`, no program dynamic): issue 15's bound on the drop in throughput.

    python -m bench.breadth_ab [-n 20] [--seed 0] [--rounds 1] [--arms families|grads|dynamic|all]
        [--grad-share G] [--dynamic-share D] [--mutate M] [--stages]

``--grad-share`` and ``--dynamic-share`` set the "with" arm's shares, to measure a
candidate default. Under ``--arms all`` the "with" arm also draws the campaign's default
share of mutants (``--mutate``, issue 15's mutational generation) of the repository's seeds,
as a default campaign with an empty corpus does; ``--mutate 0``: the generator alone.

Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from collections import Counter
from pathlib import Path

from aliasfuzz.campaign import _judge, sources
from aliasfuzz.campaign.options import DEFAULT_PIPELINES, CampaignOptions, task_options
from aliasfuzz.fuzz import costs, sample
from aliasfuzz.fuzz.ops import REGISTRY
from bench.stages import judge_all

#: registry modules of the breadth families
BREADTH = ("windows", "fallbacks", "foreach", "outs2")

#: ``--arms all``: every registry module issue 15 added (the breadth families above, the
#: index family, metadata-mutating ops, autograd rows, the Optional-input row) ...
ISSUE15 = BREADTH + ("indexfam", "metadata", "autograd", "optional")
#: ... and the generator's shares that draw them, all 0 in the "without" arm (with
#: ``grad_share`` 0: no input requires grad, no backward is compared; and no program
#: compiled with dynamic shapes): the generator and campaign of before issue 15
ISSUE15_SHARES = {"grad_share": 0.0, "metadata_share": 0.0, "autograd_share": 0.0,
                  "optional_share": 0.0}


@contextlib.contextmanager
def without_breadth(modules: tuple[str, ...] = BREADTH):
    """Hide the rows of registry ``modules`` from the generator (``make_config`` reads
    REGISTRY)."""
    hidden = {n: d for n, d in REGISTRY.items() if d.apply.__module__.rsplit(".", 1)[-1] in modules}
    for n in hidden:
        del REGISTRY[n]
    try:
        yield
    finally:
        REGISTRY.update(hidden)


@contextlib.contextmanager
def without_grads():
    """Generate with ``grad_share=0`` (no input marked ``requires_grad``)."""
    from aliasfuzz.fuzz.sample import generate_one

    real = _judge.generate
    _judge.generate = lambda seed, index, m=8: generate_one(seed, index, max_statements=m,
                                                             grad_share=0.0)
    try:
        yield
    finally:
        _judge.generate = real


@contextlib.contextmanager
def without_issue15():
    """The generator of before issue 15 (``--arms all``, "without"): the rows of
    :data:`ISSUE15` hidden, the shares of :data:`ISSUE15_SHARES` 0."""
    from aliasfuzz.fuzz.sample import generate_one

    real_judge, real_sample = _judge.generate, sample.generate
    _judge.generate = lambda seed, index, m=8: generate_one(seed, index, max_statements=m,
                                                             **ISSUE15_SHARES)
    sample.generate = lambda n, seed, **o: real_sample(n, seed, **{**ISSUE15_SHARES, **o})
    try:
        with without_breadth(ISSUE15):
            yield
    finally:
        _judge.generate, sample.generate = real_judge, real_sample


#: the dynamic share of the "with" arm of ``--arms dynamic`` and ``--arms all`` (0 in
#: "without")
_DYNAMIC = {"share": 0.0}


@contextlib.contextmanager
def with_dynamic(share: float | None = None):
    """Mark a ``share`` of programs dynamic (``--arms dynamic``, "with"; None: the
    campaign's default share)."""
    _DYNAMIC["share"] = CampaignOptions(programs=1).dynamic_share if share is None else share
    try:
        yield
    finally:
        _DYNAMIC["share"] = 0.0


@contextlib.contextmanager
def with_grad_share(share: float | None):
    """Generate with ``grad_share=share`` (None: the generator's default): a candidate
    default measured by ``--grad-share``."""
    real = _judge.generate
    if share is not None:
        _judge.generate = lambda seed, index, m=8: real(seed, index, m, grad_share=share)
    try:
        yield
    finally:
        _judge.generate = real


#: ``--arms all``, "with": the share of programs that mutate a program of the
#: repository's ``corpus/seeds`` (as a default campaign with an empty corpus draws them)
_MUTATE: dict = {"share": 0.0, "sources": None}


@contextlib.contextmanager
def with_mutants(share: float):
    """Draw a ``share`` of programs as mutants (:class:`aliasfuzz.campaign.sources.Programs`,
    the sources a campaign with an empty corpus collects: the repository's seeds)."""
    _MUTATE["share"] = share
    try:
        yield
    finally:
        _MUTATE["share"] = 0.0


def _fresh_kernels():
    """Inductor's caches emptied for one arm-run (a temporary cache directory, the
    in-memory code caches cleared; ``torch._inductor.utils.fresh_cache``): every round
    judges the same programs, and a later arm-run would otherwise load the kernels an
    earlier one compiled (C++ on CPU), which a campaign's new programs never do. Measured
    on the H200 (2026-12-03): the second round of an arm ran 1.9 times as fast as the
    first with a shared cache, which made the ratio depend on the order of the arms."""
    from torch._inductor import utils

    fresh = getattr(utils, "fresh_cache", None) or utils.fresh_inductor_cache
    return fresh()


def _judged(seed: int, i: int) -> None:
    """Judge program ``i`` of ``seed`` as a campaign's workers do (its dynamic mark, if any;
    a mutant for the share of :data:`_MUTATE`)."""
    if _MUTATE["share"]:
        if _MUTATE["sources"] is None:  # read once, as a campaign does at its start
            empty = Path(tempfile.gettempdir()) / "aliasfuzz-breadth-ab-empty-corpus"
            _MUTATE["sources"] = sources.collect(empty)
        drawn = sources.Programs(seed, 8, _MUTATE["share"], _MUTATE["sources"],
                                 dynamic_share=_DYNAMIC["share"])
        program = drawn[i]
    else:
        program = sources.mark_dynamic(_judge.generate(seed, i), _DYNAMIC["share"], seed, i)
    options = {p: task_options({}, p, program) for p in DEFAULT_PIPELINES}
    judge_all(program, DEFAULT_PIPELINES, "cpu", False, options)


#: ``--stages``: seconds per stage (:mod:`aliasfuzz.fuzz.costs`) summed per arm
_STAGES: dict[str, Counter] = {}


def arm(n: int, seed: int, name: str = "") -> tuple[float, float]:
    """(programs/s judged, programs/s generated) over programs 0..n-1 of ``seed``; their
    seconds per stage are added to ``_STAGES[name]``."""
    _judged(seed, n)  # warm-up
    costs.take()
    t0 = time.perf_counter()
    for i in range(n):
        _judged(seed, i)
    judged = n / (time.perf_counter() - t0)
    _STAGES.setdefault(name, Counter()).update(costs.take())
    t0 = time.perf_counter()
    sample.generate(20 * n, seed)
    return judged, 20 * n / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--arms", choices=("families", "grads", "dynamic", "all"), default="families",
                    help="all: the default campaign against the one of before issue 15 (no "
                    "breadth rows, no family shares, no gradients, no dynamic shapes)")
    ap.add_argument("--warmup", type=int, default=8,
                    help="programs judged before the first round (first compiles, imports)")
    ap.add_argument("--grad-share", type=float, default=None,
                    help="--arms all: the \"with\" arm's grad share (a candidate default; "
                    "default: the generator's)")
    ap.add_argument("--dynamic-share", type=float, default=None,
                    help="--arms all/dynamic: the \"with\" arm's dynamic share (a candidate "
                    "default; default: the campaign's)")
    ap.add_argument("--mutate", type=float, default=None,
                    help="--arms all: the \"with\" arm's share of mutants of the repository's "
                    "seeds (default: the campaign's --mutate default)")
    ap.add_argument("--stages", action="store_true",
                    help="also print each arm's seconds per program by stage and their "
                    "difference (where the extra time goes)")
    args = ap.parse_args(argv)
    mutate = CampaignOptions(programs=1).mutate if args.mutate is None else args.mutate
    hide = {"families": without_breadth, "grads": without_grads}.get(args.arms)
    for i in range(args.warmup):  # the first round's first arm paid this alone otherwise
        judge_all(_judge.generate(args.seed + 1, i), DEFAULT_PIPELINES, "cpu", False)
    got: dict[str, list[tuple[float, float]]] = {"with": [], "without": []}
    for r in range(args.rounds):
        order = ("with", "without") if r % 2 == 0 else ("without", "with")
        for name in order:
            if args.arms == "dynamic":  # "without" is the default here: no program dynamic
                ctx = with_dynamic(args.dynamic_share) if name == "with" else contextlib.nullcontext()
            elif args.arms == "all":
                ctx = contextlib.ExitStack()
                if name == "with":
                    ctx.enter_context(with_dynamic(args.dynamic_share))
                    ctx.enter_context(with_grad_share(args.grad_share))
                    ctx.enter_context(with_mutants(mutate))
                else:
                    ctx.enter_context(without_issue15())
            else:
                ctx = hide() if name == "without" else contextlib.nullcontext()
            with ctx, _fresh_kernels():
                judged, generated = arm(args.n, args.seed, name)
            got[name].append((judged, generated))
            print(f"round {r} {name:8s} judged {judged:.3f} programs/s, generated {generated:.0f} programs/s",
                  flush=True)
    mean = {k: (sum(j for j, _ in v) / len(v), sum(g for _, g in v) / len(v)) for k, v in got.items()}
    for k, (j, g) in mean.items():
        print(f"{k:8s} judged {j:.3f} programs/s, generated {g:.0f} programs/s")
    print(f"ratio with/without: judged {mean['with'][0] / mean['without'][0]:.3f}, "
          f"generated {mean['with'][1] / mean['without'][1]:.3f}")
    if args.stages:
        print_stages(args.n * args.rounds)
    return 0


def print_stages(programs: int) -> None:
    """Per stage, the seconds per program of each arm and their difference, largest first:
    where the "with" arm's extra time goes."""
    w, wo = _STAGES.get("with", Counter()), _STAGES.get("without", Counter())
    rows = sorted(set(w) | set(wo), key=lambda k: -abs(w[k] - wo[k]))
    print(f"{'stage':32s} {'with s/prog':>12s} {'without s/prog':>15s} {'extra':>8s}")
    for k in rows:
        a, b = w[k] / programs, wo[k] / programs
        print(f"{k:32s} {a:12.3f} {b:15.3f} {a - b:+8.3f}")
    a, b = sum(w.values()) / programs, sum(wo.values()) / programs
    print(f"{'all stages':32s} {a:12.3f} {b:15.3f} {a - b:+8.3f}")


if __name__ == "__main__":
    raise SystemExit(main())
