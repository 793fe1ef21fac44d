"""Cost of the fast path against its former self and against full Inductor (issue 13).

The fast path ``inductor-reinplace`` is ``torch.compile`` through Inductor's ``compile_fx``
up to and including its post-grad passes (pre-grad, AOTAutograd, joint-graph passes,
``reorder_for_locality``, ``remove_noop_ops``, the pattern passes, the reinplace pass and
its decompositions), with the graph run eagerly instead of lowered. This script times, on
the same N generated programs in one process (one torch thread, after a warm-up program
each):

* ``fast path``: ``run_pipeline("inductor-reinplace", ...)``;
* ``former fast path``: the adapter it replaced, kept here as the baseline:
  ``aot_function`` with Inductor's decompositions, then the reinplace pass and the two
  decompositions standalone (no Dynamo, no joint or other post-grad passes);
* ``inductor``: ``run_pipeline("inductor", ...)``, full ``torch.compile`` (C++ codegen).

Programs with user Triton launches are left out: full Inductor cannot compile them on a
CPU (it fails fast at codegen, which would flatter it). It prints programs/s (wall) for
each and the ratios; the goal is ``inductor / fast path >= 5`` (seconds per program).

Usage: ``python bench/fastpath.py [-n 60] [--seed 0]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from aliasfuzz.fuzz.eager import make_inputs
from aliasfuzz.fuzz.ops import OpKind, lookup
from aliasfuzz.fuzz.render import load_function
from aliasfuzz.fuzz.sample import generate
from aliasfuzz.passes import hygiene, run_pipeline


def _former_fast_path(program) -> None:
    """The pre-issue-13 ``inductor-reinplace``: aot_function + the pass standalone."""
    from torch._functorch.aot_autograd import aot_function
    from torch._guards import detect_fake_mode
    from torch._inductor.decomposition import select_decomp_table
    from torch._inductor.fx_passes import post_grad as pg
    from torch._inductor.fx_utils import FakeTensorUpdater
    from torch._inductor.virtualized import V

    def fw(gm, _inputs):
        fake = detect_fake_mode([n.meta["val"] for n in gm.graph.nodes if "val" in n.meta])
        with V.set_fake_mode(fake):
            pg.reinplace_inplaceable_ops(FakeTensorUpdater(gm), gm.graph)
            pg.decompose_triton_kernel_wrapper_functional(gm.graph)
            pg.decompose_auto_functionalized(gm.graph)
        gm.recompile()
        return gm

    fn, _ = load_function(program)
    hygiene.reset_program()
    compiled = aot_function(fn, fw_compiler=fw, decompositions=select_decomp_table(),
                            keep_inference_input_mutations=True)
    try:
        compiled(*make_inputs(program))
    except Exception:  # noqa: BLE001 - a failure of torch costs what it costs
        pass


def _time(run, programs) -> list[float]:
    run(programs[0])  # warm-up
    out = []
    for p in programs:
        t = time.perf_counter()
        run(p)
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    hygiene.setup_process()
    programs = [
        p for p in generate(args.n * 2, args.seed)
        if not any(lookup(op.op).kind is OpKind.TRITON for op in p.body)
    ][: args.n]
    runs = {
        "fast path": lambda p: run_pipeline("inductor-reinplace", p, make_inputs(p)),
        "former fast path": _former_fast_path,
        "inductor": lambda p: run_pipeline("inductor", p, make_inputs(p)),
    }
    secs = {name: _time(run, programs) for name, run in runs.items()}
    print(f"{len(programs)} programs of seed {args.seed} (no Triton launches), one torch thread")
    print(f"{'path':<18} {'programs/s':>11} {'median ms':>10} {'total s':>8}")
    for name, s in secs.items():
        print(f"{name:<18} {len(s) / sum(s):>11.2f} {1000 * statistics.median(s):>10.1f} {sum(s):>8.1f}")
    fast, former, full = (sum(secs[k]) for k in runs)
    print(f"fast path vs former fast path: {fast / former:.2f}x the time")
    print(f"inductor vs fast path: {full / fast:.2f}x the time (goal >= 5)")


if __name__ == "__main__":
    main()
