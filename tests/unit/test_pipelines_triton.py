"""User Triton kernels on CPU: TTIR mutation analysis on a fake target, interpreted runs.

The kernel is written to a file of its own (``@triton.jit`` reads its source). Without
the compatibility layer, the analysis would list every pointer argument as mutated; with
it, only ``out_ptr`` is a candidate, and the runs match eager (itself interpreted).
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap

import pytest
import torch

pytest.importorskip("triton")

from aliasfuzz.fuzz import process, triton_compat  # noqa: E402
from aliasfuzz.passes import run_function  # noqa: E402

# These tests are about the CPU layer; with a GPU the real driver and launches are used.
pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="CPU Triton layer only")

KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def into_fresh(x, y):
    out = torch.empty_like(x)
    add_kernel[(1,)](x, y, out, x.numel(), BLOCK=16)
    return out


def into_live_intermediate(x, y):
    z = x.sin()
    w = z * 2
    add_kernel[(1,)](w, y, z, x.numel(), BLOCK=16)
    return z, w


def into_input(x, y):
    add_kernel[(1,)](x, y, x, x.numel(), BLOCK=16)
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    # The tests call the kernels themselves for their eager reference: a native launch on
    # CPU needs the process setup every aliasfuzz entry point does for itself (in random
    # order nothing else may have done it yet: 0 active drivers).
    process.setup()
    path = tmp_path_factory.mktemp("kernels") / "aliasfuzz_test_add_kernel.py"
    path.write_text(textwrap.dedent(KERNEL))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def inputs():
    return (torch.arange(8.0), torch.linspace(-1, 1, 8))


def test_layer_enables_only_without_gpu():
    assert triton_compat.enable() is True and triton_compat.enabled()


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU layer only")
def test_enable_reinstalls_the_launch_route_a_scoped_patch_took_away():
    # a block that saved JITFunction.run before the first enable() and restored it after
    # left the native launch in place while enable() said yes (xdist order-dependent failure)
    from triton.runtime.jit import JITFunction

    assert triton_compat.enable()
    routed = JITFunction.run
    JITFunction.run = lambda self, *args, **kwargs: None  # the native launch, as far as we care
    try:
        assert triton_compat.enable()
        assert hasattr(JITFunction.run, "aliasfuzz_native")
    finally:
        JITFunction.run = routed


@pytest.mark.parametrize("pipeline", ["aot_eager", "inductor-reinplace"])
@pytest.mark.parametrize("fn", ["into_fresh", "into_live_intermediate", "into_input"])
def test_kernel_programs_match_eager(kernels, pipeline, fn):
    f = getattr(kernels, fn)
    ref_inputs = inputs()
    ref = f(*ref_inputs)
    ref = () if ref is None else (ref if isinstance(ref, tuple) else (ref,))
    ex = run_function(pipeline, f, inputs())
    assert ex.failure is None, ex.failure
    for a, b in zip((*ex.outputs, *ex.inputs_after), (*ref, *ref_inputs), strict=True):
        torch.testing.assert_close(a, b)


def test_analysis_finds_only_the_written_pointer(kernels):
    ex = run_function("inductor-reinplace", kernels.into_fresh, inputs())
    assert [(d.kind, d.arg, d.reinplaced) for d in ex.decisions] == [
        ("triton_kernel_wrapper_functional", "out_ptr", True)
    ]
    assert ex.decisions[0].line is not None


def test_kernel_writing_a_live_intermediate_keeps_its_clone(kernels):
    # z is read by w = z * 2 before the launch only, so it may be written in place; the
    # launch also reads w, which is another storage: reinplaced.
    ex = run_function("inductor-reinplace", kernels.into_live_intermediate, inputs())
    [d] = ex.decisions
    assert (d.arg, d.reinplaced, d.nbytes) == ("out_ptr", True, 32)


def test_kernel_writing_an_input_reinplaces_and_erases_the_copy(kernels):
    ex = run_function("inductor-reinplace", kernels.into_input, inputs())
    got = sorted((d.kind, d.reinplaced) for d in ex.decisions)
    assert got == [("copy_epilogue", True), ("triton_kernel_wrapper_functional", True)]


@pytest.mark.parametrize("fn", ["into_fresh", "into_input"])
def test_fx_reinplace_refuses_a_raw_launch_of_a_hand_written_function(kernels, fn):
    # make_fx cannot see a raw @triton.jit launch (torch/_library/triton.py wrap_triton):
    # the launch raises while tracing, the trace failure is a documented refusal
    from aliasfuzz.oracle.refusals import classify

    x, y = inputs()
    ex = run_function("fx-reinplace", getattr(kernels, fn), (x, y))
    assert (ex.failure.stage, ex.failure.error_type) == ("trace", "UncapturedTritonLaunch")
    assert "add_kernel" in ex.failure.message and "wrap_triton" in ex.failure.message
    assert classify("fx-reinplace", ex.failure).rule == "make-fx-raw-triton-launch"
    torch.testing.assert_close(x, inputs()[0])  # nothing ran on the caller's inputs


def test_traced_launch_is_refused_never_wrapped_nor_launched(kernels, monkeypatch):
    # On a GPU only the traced-tensor route is installed: make_fx / aot_function must never
    # hand fake tensors to the native launch (an illegal address on the H200), and must not
    # route it through wrap_triton either (PyTorch does not: fourth audit, 3712e519e2);
    # real tensors still go to the native launch. The interpreter plays the native launch.
    from torch.fx.experimental.proxy_tensor import make_fx
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    native_calls = []

    def native(self, *args, grid, warmup, **kwargs):
        native_calls.append([type(a) for a in args if isinstance(a, torch.Tensor)])
        return InterpretedFunction(self.fn).run(*args, grid=grid, warmup=warmup, **kwargs)

    monkeypatch.setattr(JITFunction, "run", triton_compat._route_traced(native))
    traced = make_fx(torch.func.functionalize(kernels.into_fresh), tracing_mode="fake")
    with pytest.raises(triton_compat.UncapturedTritonLaunch, match="wrap_triton"):
        traced(*inputs())
    assert native_calls == []  # tracing reached no native launch
    x, y = inputs()
    torch.testing.assert_close(kernels.into_fresh(x, y), x + y)
    assert native_calls and all(set(c) == {torch.Tensor} for c in native_calls)
