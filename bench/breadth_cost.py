"""What issue 15's additions cost, program by program (paired, same programs).

``bench/breadth_ab.py`` compares two generators, so its two arms judge different programs
and its ratio carries the op mix's noise. This bench judges the default campaign's
programs ``0..N-1`` of ``--seed`` (the generator's default shares, the campaign's default
``--dynamic-share``) in one of five variants:

- ``asis``: as the default campaign judges them;
- ``nograd``: a program whose inputs require grad (``meta["grad"]``) without the marking
  (``grad_share=0``: the same ops and inputs, no backward compared, no autograd rows, see
  :func:`aliasfuzz.fuzz.grads.mark_grad_leaves`), the others as is;
- ``static``: a program marked dynamic (:func:`aliasfuzz.campaign.sources.mark_dynamic`)
  compiled static, the others as is;
- ``nometa`` and ``noopt``: without the metadata-mutating statements (``metadata_share=0``)
  or the Optional input (``optional_share=0``), each drawn after the rest of the program
  from a stream of its own, so the rest is the same program.

Each variant runs in a process of its own (with an Inductor cache directory of its own):
judging the same program twice in one process, the second judgment reuses the kernels the
first compiled (C++ on CPU), which a campaign's fresh programs never do. ``--combine``
pairs the variants' per-program seconds by ``(seed, index)`` and prints, per addition,
the programs that carry it, their seconds with and without it, and the extra seconds as a
share of all judging time: the throughput the default campaign would regain without it is
``1 / (1 - share)``. Programs that carry neither addition are judged identically in every
variant: their difference between processes is printed as the noise floor. For the op
rows (the registry modules of :data:`bench.breadth_ab.ISSUE15`), which cannot be removed
from a program without changing it, it prints the mean seconds of the programs that use
one against those that use none (unpaired: indicative only).

    TORCHINDUCTOR_CACHE_DIR=$(mktemp -d) python -m bench.breadth_cost --variant asis \
        [-n 24] [--seed 0] [--warmup 4] > asis.txt     # the same for each variant
    python -m bench.breadth_cost --combine asis.txt nograd.txt static.txt nometa.txt noopt.txt

Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import functools
import signal
import time

from aliasfuzz.campaign import _judge, sources
from aliasfuzz.campaign.options import DEFAULT_PIPELINES, CampaignOptions, task_options
from aliasfuzz.fuzz.ops import REGISTRY
from aliasfuzz.fuzz.sample import generate_one
from bench.breadth_ab import ISSUE15
from bench.stages import judge_all


def _seconds(program) -> float:
    """Wall seconds of judging ``program`` under the default pipelines, as a worker does."""
    options = {p: task_options({}, p, program) for p in DEFAULT_PIPELINES}
    t0 = time.perf_counter()
    judge_all(program, DEFAULT_PIPELINES, "cpu", False, options)
    return time.perf_counter() - t0


@functools.cache
def _issue15_ops() -> frozenset[str]:
    """The registry ops of the issue-15 modules (read once: REGISTRY is fixed here)."""
    return frozenset(n for n, d in REGISTRY.items()
                     if d.apply.__module__.rsplit(".", 1)[-1] in ISSUE15)


def _uses_rows(program) -> bool:
    """Whether a statement of ``program`` applies an op of an issue-15 registry module."""
    return any(getattr(s, "op", None) in _issue15_ops() for s in program.body)


#: variant -> the generator options that remove its addition (``static``: none, the
#: dynamic mark is dropped instead)
VARIANTS = {"asis": {}, "nograd": {"grad_share": 0.0}, "static": {},
            "nometa": {"metadata_share": 0.0}, "noopt": {"optional_share": 0.0}}
#: what each variant removes, for the summary
WHAT = {"nograd": "gradients", "static": "dynamic shapes", "nometa": "metadata ops",
        "noopt": "Optional inputs"}


def variant(program, name: str, seed: int, index: int):
    """``program`` (program ``index`` of ``seed``, as the campaign draws it) in variant
    ``name`` (see the module docstring): the same program when it does not carry the
    variant's addition."""
    if name == "static":
        if not program.meta.get("dynamic"):
            return program
        return type(program)(program.storages, program.inputs, program.body, program.outputs,
                             {k: v for k, v in program.meta.items() if k != "dynamic"})
    if not VARIANTS[name]:
        return program
    share = CampaignOptions(programs=1).dynamic_share
    bare = generate_one(seed, index, max_statements=8, **VARIANTS[name])
    return sources.mark_dynamic(bare, share, seed, index)


class _Late(Exception):
    """A program judged for longer than ``--timeout`` seconds."""


def _late(signum, frame):
    raise _Late


def run(name: str, n: int, seed: int, start: int = 0, timeout: int = 120) -> None:
    """Judge programs ``start..n-1`` of ``seed`` in variant ``name``; print one line per
    program: ``t SEED INDEX SECONDS DIFFERS ROWS`` (DIFFERS: 1 when the variant changed the
    program; ROWS: 1 when the program as the campaign draws it uses an issue-15 row), or
    ``x SEED INDEX late`` for one judged longer than ``timeout`` seconds (left out of the
    pairing). The judge runs in this process, unlike a campaign's isolated workers: a
    program that crashes torch kills it, and ``bench/gpu/h200.sh`` restarts it with
    ``--start`` past that program."""
    share = CampaignOptions(programs=1).dynamic_share
    signal.signal(signal.SIGALRM, _late)
    for i in range(start, n):
        program = sources.mark_dynamic(_judge.generate(seed, i), share, seed, i)
        judged = variant(program, name, seed, i)
        signal.alarm(timeout)
        try:
            seconds = _seconds(judged)
        except _Late:
            print(f"x {seed} {i} late", flush=True)
            continue
        finally:
            signal.alarm(0)
        print(f"t {seed} {i} {seconds:.4f} {int(judged != program)} {int(_uses_rows(program))}",
              flush=True)


def combine(paths: list[str]) -> None:
    """Pair the ``t`` lines of the variants' outputs (each file names its variant on a
    ``variant NAME`` line) and print the summary of the module docstring."""
    got: dict[str, dict[tuple[int, int], tuple[float, int, int]]] = {}
    for path in paths:
        name, rows = None, {}
        for line in open(path):
            parts = line.split()
            if parts[:1] == ["variant"]:
                name = parts[1]
            elif parts[:1] == ["t"]:
                rows[(int(parts[1]), int(parts[2]))] = (float(parts[3]), int(parts[4]),
                                                        int(parts[5]))
        got.setdefault(name, {}).update(rows)
    asis = got["asis"]
    total = sum(v[0] for v in asis.values())
    print(f"{len(asis)} programs, {total:.1f} s judged as is")
    for name, other in got.items():
        if name == "asis":
            continue
        keys = [k for k, v in other.items() if v[1] and k in asis]
        with_s = sum(asis[k][0] for k in keys)
        without = sum(other[k][0] for k in keys)
        print(f"{WHAT[name]:15s} {len(keys):3d} programs: {with_s:.1f} s with, {without:.1f} s "
              f"without; extra {with_s - without:.1f} s = {(with_s - without) / total:.1%} of all")
        alike = [k for k, v in other.items() if not v[1] and k in asis]
        a, b = sum(asis[k][0] for k in alike), sum(other[k][0] for k in alike)
        print(f"  noise floor: {len(alike)} programs judged alike: {a:.1f} s as is, {b:.1f} s "
              f"in {name} ({(a - b) / total:+.1%} of all)")
    rows = [v[0] for v in asis.values() if v[2]]
    plain = [v[0] for v in asis.values() if not v[2]]
    if rows and plain:
        print(f"issue-15 rows   {len(rows)} programs use one: {sum(rows) / len(rows):.2f} s each; "
              f"{len(plain)} use none: {sum(plain) / len(plain):.2f} s each (unpaired)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=24)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variant", choices=tuple(VARIANTS), default="asis")
    ap.add_argument("--warmup", type=int, default=4,
                    help="programs judged first, not counted (first compiles, imports)")
    ap.add_argument("--start", type=int, default=0, help="first program index")
    ap.add_argument("--timeout", type=int, default=120,
                    help="seconds after which a program's judgment is abandoned")
    ap.add_argument("--combine", nargs="+", metavar="FILE",
                    help="pair the outputs of --variant runs and print the summary")
    args = ap.parse_args(argv)
    if args.combine:
        combine(args.combine)
        return 0
    if args.start == 0:
        print(f"variant {args.variant}", flush=True)
    for i in range(args.warmup):
        _seconds(_judge.generate(args.seed + 1000, i))
    run(args.variant, args.n, args.seed, args.start, args.timeout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
