"""What Inductor's CPU compile costs: codegen against C++ builds, and the kernel cache.

Judges programs ``0..N-1`` of ``--seed`` under the ``inductor`` pipeline only, in one
process, through the worker's entry (:func:`aliasfuzz.campaign._judge.evaluate`), and
splits ``inductor.compile`` (:mod:`aliasfuzz.fuzz.costs`) by wrapping Inductor's own
C++ path (torch 2.11-2.13, ``torch/_inductor/codecache.py``):

* ``CppCodeCache.load_async`` calls: one per C++ source Inductor wants loaded (a kernel
  module, or the wrapper with ``cpp_wrapper``); a call whose key is neither in the
  process's memory cache nor on disk (``TORCHINDUCTOR_CACHE_DIR``) compiles;
* ``CppBuilder.build``: each g++ invocation (compile or link) and its wall seconds.

Codegen and everything else of the compile is ``inductor.compile`` minus the build
seconds. With ``--cache DIR`` the kernel cache is that folder (reuse it across runs to
see a warm cache: ``--cache`` twice with the same folder), else a fresh temporary one.
``--inductor-config k=v`` sets ``torch._inductor.config`` entries (the pipeline's own
``inductor_config`` option), e.g. ``cpp.simdlen=0``. The reinplace pass's decisions per
program are counted through the decision spy (``decisions`` of each outcome), and the
pass's own runs (``post_grad.reinplace_inplaceable_ops`` calls) against the graphs
compiled (``fx_codegen_and_compile`` calls), so that a lever that skips the pass shows.

Usage: ``python bench/compile_cpu.py [-n 30] [--seed 0] [--cache DIR]
[--inductor-config cpp.simdlen=0] [--threads 1]``.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import tempfile
import time
from collections import Counter


def _parse_config(items: list[str]) -> dict:
    out = {}
    for item in items:
        k, _, v = item.partition("=")
        try:
            out[k] = ast.literal_eval(v)
        except (ValueError, SyntaxError):
            out[k] = v
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", default=None, help="TORCHINDUCTOR_CACHE_DIR (default: fresh)")
    ap.add_argument("--inductor-config", action="append", default=[])
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--compile-threads", type=int, default=1)
    args = ap.parse_args()
    cache = args.cache or tempfile.mkdtemp(prefix="af-kcache-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = str(args.compile_threads)

    import torch
    from torch._inductor import codecache, cpp_builder

    from aliasfuzz.campaign import _judge
    from aliasfuzz.fuzz import costs

    if args.threads:
        torch.set_num_threads(args.threads)
    stats: Counter = Counter()
    builds: list[float] = []
    real_build = cpp_builder.CppBuilder.build

    def build(self, *a, **k):
        t0 = time.perf_counter()
        try:
            return real_build(self, *a, **k)
        finally:
            builds.append(time.perf_counter() - t0)

    cpp_builder.CppBuilder.build = build
    real_load = codecache.CppCodeCache.load_async.__func__

    def load_async(cls, *a, **k):
        stats["loads"] += 1
        return real_load(cls, *a, **k)

    codecache.CppCodeCache.load_async = classmethod(load_async)
    # the pass itself, under the decision spy (which wraps whatever the global holds)
    from torch._inductor.fx_passes import post_grad

    real_pass = post_grad.reinplace_inplaceable_ops

    def reinplace_pass(*a, **k):
        stats["reinplace runs"] += 1
        return real_pass(*a, **k)

    post_grad.reinplace_inplaceable_ops = reinplace_pass
    from torch._inductor import compile_fx

    real_inner = compile_fx.fx_codegen_and_compile

    def compile_inner(*a, **k):
        stats["graphs"] += 1
        return real_inner(*a, **k)

    compile_fx.fx_codegen_and_compile = compile_inner
    opts = {"inductor_config": _parse_config(args.inductor_config)} if args.inductor_config \
        else None
    verdicts: Counter = Counter()
    decisions = 0
    _judge.evaluate(_judge.generate(args.seed, args.n), "inductor", "cpu", opts)  # warm-up
    costs.take()
    builds.clear()
    stats.clear()
    t0 = time.perf_counter()
    for i in range(args.n):
        out = _judge.evaluate(_judge.generate(args.seed, i), "inductor", "cpu", opts)
        verdicts[(out["verdict"], out.get("check"))] += 1
        decisions += len(out.get("decisions") or [])
    wall = time.perf_counter() - t0
    st = costs.take()
    comp = st.get("inductor.compile", 0.0)
    b = sum(builds)
    print(f"torch {torch.__version__}, seed {args.seed}, {args.n} programs, inductor only, "
          f"config {opts and opts['inductor_config']}, cache {'given' if args.cache else 'fresh'}"
          f", load average {os.getloadavg()[0]:.1f}")
    print(f"wall {wall:.1f} s ({args.n / wall:.2f} programs/s); inductor.compile {comp:.1f} s "
          f"({1000 * comp / args.n:.0f} ms/program)")
    print(f"  C++ builds {len(builds)} ({b:.1f} s, {1000 * b / max(1, len(builds)):.0f} ms "
          f"each, {100 * b / comp if comp else 0:.0f} % of the compile); codegen and the rest "
          f"{comp - b:.1f} s ({1000 * (comp - b) / args.n:.0f} ms/program)")
    print(f"  C++ loads {stats['loads']}, compiled {len(builds)} builds "
          f"(kernel cache hit rate ~{1 - min(1, len(builds) / max(1, stats['loads'])):.0%},"
          f" a miss is 1 build, 3 with a separate optimized part)")
    print("  other stages: " + ", ".join(f"{k} {v:.1f}" for k, v in sorted(st.items())
                                          if k != "inductor.compile" and v > 0.2))
    print(f"  reinplace pass runs {stats['reinplace runs']} for {stats['graphs']} graphs "
          f"compiled (fx_codegen_and_compile); decisions seen {decisions}; verdicts: "
          + ", ".join(f"{v}/{c}: {k}" for (v, c), k in sorted(verdicts.items(), key=str)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
