"""What Inductor's CUDA compile costs: Triton kernel compiles, autotuning, and the rest.

The GPU twin of ``bench/compile_cpu.py`` (issue 16: ``inductor.compile`` was 26 % of a
16-worker H200 campaign's worker time, about 1 s per program). Judges programs ``0..N-1``
of ``--seed`` on CUDA under the ``inductor`` pipeline only, in one process, through the
worker's entry (:func:`aliasfuzz.campaign._judge.evaluate`), and splits ``inductor.compile``
(:mod:`aliasfuzz.fuzz.costs`) by wrapping Inductor's Triton runtime (torch 2.11-2.13,
``torch/_inductor/runtime/triton_heuristics.py``):

* ``CachingAutotuner._precompile_config``: one Triton compile of one kernel config (a
  kernel with several candidate configs compiles each), with its wall seconds;
* ``CachingAutotuner.benchmark_all_configs``: the autotuning of a kernel with more than
  one config at its first launch (inside the pipeline's run or compile), wall seconds.

``--inductor-config k=v`` sets ``torch._inductor.config`` entries (the pipeline's own
``inductor_config`` option), e.g. ``triton.autotune_pointwise=False``, so that one arm per
process can be compared; the last line lists each program's verdict, for comparing arms
(a lever must not change them). Run each arm in a fresh process with a fresh kernel cache
(the default), or the in-memory caches of the first arm serve the second.

Usage: ``python bench/compile_gpu.py [-n 40] [--seed 11] [--inductor-config k=v]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter

from bench.compile_cpu import _parse_config


def _wrap(cls, name: str, times: list[float]) -> None:
    real = getattr(cls, name)

    def timed(self, *a, **k):
        t0 = time.perf_counter()
        try:
            return real(self, *a, **k)
        finally:
            times.append(time.perf_counter() - t0)

    setattr(cls, name, timed)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--inductor-config", action="append", default=[])
    args = ap.parse_args()
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="af-kcache-")
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="af-tcache-")
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"  # as a worker of a 16-worker campaign

    import torch
    from torch._inductor.runtime import triton_heuristics as th

    from aliasfuzz.campaign import _judge
    from aliasfuzz.fuzz import costs

    compiles: list[float] = []
    tunes: list[float] = []
    _wrap(th.CachingAutotuner, "_precompile_config", compiles)
    _wrap(th.CachingAutotuner, "benchmark_all_configs", tunes)
    opts = ({"inductor_config": _parse_config(args.inductor_config)}
            if args.inductor_config else None)
    _judge.evaluate(_judge.generate(args.seed, args.n), "inductor", "cuda", opts)  # warm-up
    costs.take()
    compiles.clear()
    tunes.clear()
    verdicts: Counter = Counter()
    per_program = []
    t0 = time.perf_counter()
    for i in range(args.n):
        out = _judge.evaluate(_judge.generate(args.seed, i), "inductor", "cuda", opts)
        verdicts[(out["verdict"], out.get("check"))] += 1
        per_program.append(f"{i}:{out['verdict']}/{out.get('check')}")
    wall = time.perf_counter() - t0
    st = costs.take()
    comp = st.get("inductor.compile", 0.0)
    c, t = sum(compiles), sum(tunes)
    print(f"torch {torch.__version__}, seed {args.seed}, {args.n} programs on cuda, inductor "
          f"only, config {opts and opts['inductor_config']}, load {os.getloadavg()[0]:.1f}")
    print(f"wall {wall:.1f} s ({args.n / wall:.2f} programs/s); inductor.compile {comp:.1f} s "
          f"({1000 * comp / args.n:.0f} ms/program); inductor.run "
          f"{st.get('inductor.run', 0.0):.1f} s")
    print(f"  Triton config compiles {len(compiles)} ({len(compiles) / args.n:.1f}/program, "
          f"{c:.1f} s, {1000 * c / max(1, len(compiles)):.0f} ms each, "
          f"{100 * c / comp if comp else 0:.0f} % of inductor.compile)")
    print(f"  autotuning runs {len(tunes)} ({t:.1f} s, {1000 * t / args.n:.0f} ms/program)")
    print("  other stages: " + ", ".join(f"{k} {v:.1f}" for k, v in sorted(st.items())
                                          if k != "inductor.compile" and v > 0.2))
    print("  verdicts: " + ", ".join(f"{v}/{ch}: {k}" for (v, ch), k in
                                      sorted(verdicts.items(), key=str)))
    print("per program: " + " ".join(per_program))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
