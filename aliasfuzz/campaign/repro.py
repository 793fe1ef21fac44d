"""Standalone ``repro.py`` for a corpus entry: needs only torch (and triton for kernels).

The file holds the program (custom ops and kernels inlined by
:func:`aliasfuzz.fuzz.render.render_module`), its inputs (:func:`render_inputs`, the same
expressions the eager reference uses) and a ``__main__`` that runs eager and the
finding's pipeline, built with torch alone the way :mod:`aliasfuzz.passes.pipelines`
builds it:

* ``torchscript``: the ``def`` scripted from its own source through a fresh
  ``torch.jit.CompilationUnit`` under the executor knobs of
  :func:`aliasfuzz.passes.torchscript.jit_knobs` (executor from the entry's
  ``pipeline_options``), called ``calls`` times on fresh inputs, each call compared with
  an eager twin (values, inputs after the call, ``requires_grad``, aliasing); when that
  executor agrees with eager, the executors the explanation's ``| profiling: ..., legacy:
  ...`` tail names as not ok are run in turn.
* ``inductor-reinplace``: ``aot_function`` with Inductor's decompositions and
  ``keep_inference_input_mutations=True``, then the post-grad reinplace pass and the two
  decompositions run standalone (mirrors ``_run_pass_standalone``); Dynamo's
  ``aot_autograd`` when the program has control flow.
* ``fx-reinplace``: ``make_fx(functionalize(f))`` then ``torch.fx.passes.reinplace``.
* ``inductor`` / ``aot_eager``: ``torch.compile`` with that backend.

Output and exit status: ``DIFFERS`` (1) / ``SAME`` (0) for value checks; ``RAISES`` (1)
when the compiled run raises (``crash`` findings); for ``missed-reinplace`` findings
``STILL COPIED`` (1) / ``REINPLACED`` (0), from the clones left in the graph after the
pass: ``aten.clone`` nodes the pass added, functional scatter / ``index_put`` nodes that have an in-place
form (``_SCATTER_OP_TO_VIEW``, ``inplaceable_ops`` of ``torch/_inductor/fx_passes/reinplace.py``)
and ``only_clone_these_tensors`` of functionalized custom ops. ``CANNOT RUN HERE`` (3) when
the program needs a CUDA device and there is none (a CUDA finding, or user Triton kernels,
which a repro launches natively on ``cuda`` inputs).
Not reproduced: TorchScript's optional-input toggling and last-call grad drop.
"""

from __future__ import annotations

from typing import Any

from aliasfuzz.fuzz.ir import Program

__all__ = ["program_text", "render_repro"]

_MAIN = r'''

PIPELINE = @PIPELINE@
EXPECTED = @EXPECTED@
OPTIONS = @OPTIONS@  # the entry's pipeline_options
DYNAMO = @DYNAMO@  # control flow: trace through Dynamo (inductor-reinplace)
FAILING_EXECUTORS = @FAILING@  # TorchScript executors the finding names as not ok
NEEDS_CUDA = @NEEDS_CUDA@  # a CUDA finding, or user Triton kernels (native launches)

import contextlib  # noqa: E402
import inspect  # noqa: E402
import warnings  # noqa: E402

warnings.filterwarnings("ignore")


def as_tuple(r):
    return () if r is None else (tuple(r) if isinstance(r, (tuple, list)) else (r,))


def differs(a, b):
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        return (a is None) != (b is None) or (a is not None and not isinstance(a, torch.Tensor)
                                              and a != b)
    if a.shape != b.shape or a.dtype != b.dtype or a.requires_grad != b.requires_grad:
        return True
    return not torch.allclose(a.detach(), b.detach(), rtol=1e-4, atol=1e-5, equal_nan=True)


def aliasing(outs, ins):
    # for each output, the indices of the inputs sharing its storage
    def key(t):
        return t.untyped_storage().data_ptr() if isinstance(t, torch.Tensor) else None

    return [[j for j, x in enumerate(ins) if key(o) is not None and key(o) == key(x)]
            for o in outs]


def compare(ref_in, ref_out, got_in, got_out, where=""):
    bad = []
    for i, (a, b) in enumerate(zip(ref_out, got_out)):
        if differs(a, b):
            bad.append(f"{where}output {i} differs\n  eager:    {a}\n  compiled: {b}")
    for i, (a, b) in enumerate(zip(ref_in, got_in)):
        if differs(a, b):
            bad.append(f"{where}input {i} after the call differs\n  eager:    {a}\n  compiled: {b}")
    if aliasing(ref_out, ref_in) != aliasing(got_out, got_in):
        bad.append(f"{where}outputs alias inputs differently\n  eager:    "
                   f"{aliasing(ref_out, ref_in)}\n  compiled: {aliasing(got_out, got_in)}")
    if len(ref_out) != len(got_out):
        bad.append(f"{where}eager returned {len(ref_out)} outputs, compiled {len(got_out)}")
    return bad


def inductor_config():
    # mirrors pipelines._config: v2 functionalization unless the entry says otherwise
    import torch._inductor.config as cfg

    raw = dict(OPTIONS.get(PIPELINE.split("-")[0], {}))
    patch = {"enable_auto_functionalized_v2": raw.pop("enable_auto_functionalized_v2", True)}
    patch.update(raw)
    patch["force_disable_caches"] = True
    return cfg.patch(patch)


# -- the standalone reinplace pass (the fuzzer's passes/pipelines.py _run_pass_standalone) --

PASS_LOG = []


def logged_reinplace(updater, graph):
    """Inductor's reinplace pass on ``graph``, logging the copies it leaves."""
    from torch._inductor.fx_passes import reinplace as rp

    # the program's own clones are not copies the pass could drop
    own_clones = {n.name for n in graph.nodes if n.target is torch.ops.aten.clone.default}
    rp.reinplace_inplaceable_ops(updater, graph)
    # a functional op with an in-place form still in the graph allocates a copy; a
    # functionalized custom op copies its only_clone_these_tensors, a user Triton kernel
    # its tensors_to_clone
    copying = {torch.ops.aten.clone.default, *rp._SCATTER_OP_TO_VIEW, *rp.inplaceable_ops}
    kept = [f"{n} ({n.target})" for n in graph.nodes
            if n.target in copying and n.name not in own_clones]
    for n in graph.nodes:
        kept += [f"{n}:{t}" for t in n.meta.get("only_clone_these_tensors", ()) or ()]
        if "triton_kernel_wrapper_functional" in str(n.target):  # user kernels' clones
            kept += [f"{n}:{t}" for t in n.kwargs.get("tensors_to_clone", ()) or ()]
    PASS_LOG.append({"kept": kept, "graph": str(graph)})


def run_pass_standalone(gm):
    from torch._guards import detect_fake_mode
    from torch._inductor.fx_passes import post_grad as pg
    from torch._inductor.fx_utils import FakeTensorUpdater
    from torch._inductor.virtualized import V

    fake_mode = detect_fake_mode([n.meta["val"] for n in gm.graph.nodes if "val" in n.meta])
    # torch 2.13 takes the GraphModule, 2.11 its Graph
    params = list(inspect.signature(FakeTensorUpdater.__init__).parameters)
    updater = FakeTensorUpdater(gm.graph if params[1:2] == ["graph"] else gm)
    with V.set_fake_mode(fake_mode):
        if OPTIONS.get("reorder_for_locality"):
            pg.reorder_for_locality(gm.graph)
        logged_reinplace(updater, gm.graph)
        pg.decompose_triton_kernel_wrapper_functional(gm.graph)
        pg.decompose_auto_functionalized(gm.graph)
    gm.recompile()
    return gm


def inductor_reinplace(fn):
    from torch._functorch.aot_autograd import aot_function
    from torch._inductor.decomposition import select_decomp_table

    def fw(gm, _example_inputs):
        return run_pass_standalone(gm)

    if DYNAMO:
        from torch._dynamo.backends.common import aot_autograd

        backend = aot_autograd(fw_compiler=fw, decompositions=select_decomp_table(),
                               keep_inference_input_mutations=True)
        return torch.compile(fn, backend=backend)
    return aot_function(fn, fw_compiler=fw, decompositions=select_decomp_table(),
                        keep_inference_input_mutations=True)


def compiled(fn, inputs):
    """The pipeline's compiled form of ``fn`` (called once on ``inputs``)."""
    torch._dynamo.reset()
    if PIPELINE == "fx-reinplace":
        from torch.fx.experimental.proxy_tensor import make_fx
        from torch.fx.passes.reinplace import reinplace

        return reinplace(make_fx(torch.func.functionalize(fn))(*inputs), *inputs)
    if PIPELINE == "inductor-reinplace":
        return inductor_reinplace(fn)
    if PIPELINE in ("inductor", "aot_eager"):
        if PIPELINE == "inductor":
            # post_grad_passes calls the pass by its module-global name: log its copies
            from torch._inductor.fx_passes import post_grad as pg

            pg.reinplace_inplaceable_ops = logged_reinplace
        return torch.compile(fn, backend=PIPELINE)
    raise SystemExit(f"repro.py: unknown pipeline {PIPELINE!r}")


# -- TorchScript (the fuzzer's passes/torchscript.py jit_knobs, _compile, run_calls) --

EXECUTORS = {"profiling": (True, True), "legacy": (False, True), "simple": (True, False)}


@contextlib.contextmanager
def jit_knobs(executor, num_profiled_runs, fuser):
    C = torch._C
    profiling, optimize = EXECUTORS[executor]
    C._jit_set_profiling_executor(profiling)
    C._get_graph_executor_optimize(optimize)
    C._jit_set_num_profiled_runs(num_profiled_runs)
    C._jit_set_texpr_fuser_enabled(fuser)
    C._jit_override_can_fuse_on_cpu(fuser)
    C._jit_override_can_fuse_on_gpu(fuser)
    if not C._llvm_enabled():  # else the first fused run raises "LLVM Backend not found"
        C._jit_set_te_must_use_llvm_cpu(False)
    yield


def run_executor(executor, runs, calls, fuser):
    print(f"torchscript: {executor} executor, num_profiled_runs={runs}, {calls} calls")
    with jit_knobs(executor, runs, fuser):
        if OPTIONS.get("torchscript", {}).get("mode") == "trace":
            scripted = torch.jit.trace(program, make_inputs(), check_trace=False)
        else:
            # a fresh CompilationUnit, as the pipeline does (torch.jit.script caches per fn)
            scripted = torch.jit.CompilationUnit(inspect.getsource(program)).program
        bad = []
        for k in range(calls):
            ref_in = make_inputs()
            try:
                ref_out = as_tuple(program(*ref_in))
            except Exception as e:
                print(f"call {k}: eager raised {type(e).__name__}: {e}")
                return None
            got_in = make_inputs()
            try:
                got_out = as_tuple(scripted(*got_in))
            except Exception as e:
                print(f"call {k}: eager ran; TorchScript raised {type(e).__name__}: {e}")
                return "RAISES"
            bad += compare(ref_in, ref_out, got_in, got_out, f"{executor} call {k}: ")
    return bad


def run_torchscript():
    o = dict(OPTIONS.get("torchscript", {}))
    executor = ("simple" if not o.get("optimize", True)
                else "profiling" if o.get("profiling_executor", True) else "legacy")
    runs = o.get("num_profiled_runs", 1)
    calls = o.get("calls") or runs + 2
    fuser = o.get("fuser", True)
    bad = run_executor(executor, runs, calls, fuser)
    # the finding may come from another executor only (the explanation's tail names them)
    for other in FAILING_EXECUTORS:
        if bad == [] and other != executor:
            bad = run_executor(other, runs, calls, fuser)
    return bad


def main():
    if NEEDS_CUDA and not torch.cuda.is_available():
        print("repro.py: this program needs a CUDA device (a CUDA finding, or user Triton "
              "kernels launched natively); on a CPU machine use the fuzzer's replay "
              "command on this entry, which runs kernels in Triton's interpreter")
        print(f"CANNOT RUN HERE ({PIPELINE}, expected: {EXPECTED})")
        return 3
    if PIPELINE == "torchscript":
        bad = run_torchscript()
    else:
        ref_in = make_inputs()
        try:
            ref_out = as_tuple(program(*ref_in))
        except Exception as e:
            print(f"eager raised {type(e).__name__}: {e}")
            bad = None
        else:
            got_in = make_inputs()
            try:
                with inductor_config():
                    got_out = as_tuple(compiled(program, make_inputs())(*got_in))
            except Exception as e:
                print(f"eager ran; {PIPELINE} raised {type(e).__name__}: {e}")
                bad = "RAISES"
            else:
                bad = compare(ref_in, ref_out, got_in, got_out)
    if bad is None:
        print(f"EAGER RAISES ({PIPELINE}, expected: {EXPECTED})")
        return 2
    if bad == "RAISES":
        print(f"RAISES ({PIPELINE}, expected: {EXPECTED})")
        return 1
    print(*bad, sep="\n")
    if EXPECTED == "missed-reinplace" and PASS_LOG:
        kept = [c for log in PASS_LOG for c in log["kept"]]
        print("graph after the reinplace pass:", *[log["graph"] for log in PASS_LOG], sep="\n")
        print("copies kept:", kept or "none")
        if bad:  # a value difference outranks the missed copy
            print(f"DIFFERS ({PIPELINE}, expected: {EXPECTED})")
            return 1
        print("STILL COPIED" if kept else "REINPLACED", f"({PIPELINE}, expected: {EXPECTED})")
        return 1 if kept else 0
    print("DIFFERS" if bad else "SAME", f"({PIPELINE}, expected: {EXPECTED})")
    return 1 if bad else 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
'''


def _failing_executors(explanation: str) -> list[str]:
    """Executors a TorchScript explanation's tail ``| profiling: ok, legacy: crash`` names
    as not ok, in that order (empty when there is no tail)."""
    if " | " not in explanation:
        return []
    out = []
    for part in explanation.rsplit(" | ", 1)[1].split(","):
        name, _, verdict = part.strip().partition(":")
        if name in ("profiling", "legacy", "simple") and verdict.strip() not in ("ok", ""):
            out.append(name)
    return out


def _needs_cuda(program: Program, meta: dict[str, Any]) -> bool:
    """A CUDA finding, or a program with user Triton kernels (launched natively)."""
    from aliasfuzz.fuzz.ops import OpKind, lookup

    kernels = any(lookup(op.op).kind is OpKind.TRITON for op in program.body)
    return kernels or str(meta.get("device", "cpu")).startswith("cuda")


def program_text(program: Program, meta: dict[str, Any]) -> str:
    """The program (custom ops and kernels inlined) and its ``make_inputs``, with inputs on
    the device the entry needs: the part of ``repro.py`` a report shows."""
    from aliasfuzz.fuzz.render import render_inputs, render_module

    device = "cuda" if _needs_cuda(program, meta) else "cpu"
    return (
        render_module(program, inline_preludes=True).source
        + "\n\n"
        + render_inputs(program, device=device)
    )


def render_repro(program: Program, meta: dict[str, Any]) -> str:
    """The source text of ``repro.py`` for ``program`` and its corpus entry ``meta``.

    ``meta`` is the entry's ``meta.json`` (``expected.pipeline``/``verdict``,
    ``pipeline_options``, ``explanation``, ``versions``, ``device``). The script's exit
    status is 1 when the finding reproduces (DIFFERS, RAISES, STILL COPIED), 0 when not, 2
    when eager itself raises, 3 when it needs a CUDA device that is absent (a CUDA finding,
    or a program with user Triton kernels, whose inputs are then built on ``cuda``).
    """
    from aliasfuzz.fuzz.ops import OpKind, lookup

    exp = meta.get("expected", {})
    head = (
        f'"""aliasfuzz finding {meta.get("id", "")}: {exp.get("verdict")} on '
        f"{exp.get('pipeline')} (check: {exp.get('check')}).\n\n"
        f"{(meta.get('explanation') or '').strip()[:400]}\n\n"
        f'Versions: {meta.get("versions", {})}. Run: python repro.py\n"""\n'
    )
    dynamo = any(lookup(op.op).kind is OpKind.CONTROL for op in program.body)
    needs_cuda = _needs_cuda(program, meta)
    main = (
        _MAIN.replace("@PIPELINE@", repr(exp.get("pipeline", "inductor")))
        .replace("@EXPECTED@", repr(exp.get("verdict")))
        .replace("@OPTIONS@", repr(dict(meta.get("pipeline_options") or {})))
        .replace("@DYNAMO@", repr(dynamo))
        .replace("@FAILING@", repr(_failing_executors(meta.get("explanation") or "")))
        .replace("@NEEDS_CUDA@", repr(needs_cuda))
    )
    return head + program_text(program, meta) + main
