"""User Triton kernels on a machine without a GPU: analysis on a fake target, runs interpreted.

Without a GPU, three things stop programs with ``@triton.jit`` launches
(``shared/notes/pytorch-seams.md`` §4, checked on torch 2.13.0 / triton 3.7.1):

1. Triton has no active driver, so ``torch._higher_order_ops.triton_kernel_wrap.
   identify_accessed_tensors`` cannot lower the kernel to TTIR and assumes every tensor
   argument is written: ``tensors_to_clone`` would list them all. :class:`FakeCudaDriver`
   reports a CUDA sm_90 target, which is all the TTIR mutation analysis needs.
2. ``torch.utils._triton.has_triton()`` is False, so Dynamo does not recognise
   ``JITFunction`` and traces into ``JITFunction.run`` (and fails). It is patched to True.
3. A native launch needs a GPU. ``JITFunction.run`` is routed to Triton's interpreter
   (``triton.runtime.interpreter.InterpretedFunction``), which runs kernels on CPU
   tensors with numpy. Kernels stay ``JITFunction`` objects, so the analysis of (1) still
   sees them; setting ``TRITON_INTERPRET=1`` instead would turn them into
   ``InterpretedFunction`` and defeat both the analysis and Dynamo.

:func:`enable` applies the three patches once per process, only when CUDA is absent, and
is idempotent. It lives in the lowest layer because the eager reference needs it as much as
the pipelines do: a hand-written program that launches a user kernel runs natively (and
fails with ``0 active drivers``) unless the layer is on. Callers go through
:func:`aliasfuzz.fuzz.process.setup`, which every run of a program enters. On a GPU machine the real driver, analysis and launches are used; only a
launch on *traced* tensors outside Dynamo (``make_fx`` / ``aot_function``) is refused, as on CPU: it raises
:class:`UncapturedTritonLaunch`. Dispatcher-based tracing cannot see a raw launch; PyTorch
documents ``torch.library.wrap_triton`` as the way to capture one (:data:`MAKE_FX_LIMIT`).
Natively the kernel would run on the fake tensors' pointers (an illegal memory access,
seen on the H200) and leave no node in the graph; routing it through ``wrap_triton`` here
(what this layer did before the fourth audit) judged a program other than its repro's
(fourth audit, ``miscompile-reinplace-3712e519e2``). ``fx-reinplace`` renders generated
launches through ``wrap_triton`` explicitly (``fuzz/render.py`` ``CAPTURE_TRITON``); the
refusal here covers hand-written functions (the seed cases) and any other tracer.
Inductor's own codegen of user kernels still needs a GPU: on CPU the full ``inductor``
pipeline fails at compile (``0 compatible backends for target (cpu)``), which is recorded.
"""

from __future__ import annotations

import torch

from aliasfuzz.fuzz.ops.kernels import is_traced
from aliasfuzz.fuzz.process import resolve

__all__ = ["MAKE_FX_LIMIT", "UncapturedTritonLaunch", "enable", "enabled"]
# FakeCudaDriver too, built lazily by __getattr__

#: PyTorch's documented limit: ``torch/_library/triton.py`` ``wrap_triton`` docstring (torch
#: 2.11 and 2.13; docs of ``torch.library.wrap_triton``).
MAKE_FX_LIMIT = (
    "make_fx and non-strict torch.export perform Dispatcher-based tracing and cannot see calls "
    "to raw triton kernels; capture needs torch.library.wrap_triton / triton_op "
    "(torch/_library/triton.py wrap_triton)"
)


class UncapturedTritonLaunch(RuntimeError):
    """A raw ``@triton.jit`` launch on tensors of a tracer outside Dynamo (``make_fx``,
    ``aot_function``): the trace would not contain it (:data:`MAKE_FX_LIMIT`), so the program
    has no compiled meaning to compare. The oracle counts it as ``unsupported`` (rule
    ``make-fx-raw-triton-launch``, ``aliasfuzz.oracle.refusals``)."""

_ENABLED = False


def _make_driver_class():
    from triton.backends.compiler import GPUTarget
    from triton.backends.driver import DriverBase

    class FakeCudaDriver(DriverBase):
        """A Triton driver that claims a CUDA sm_90 target and can launch nothing."""

        @classmethod
        def is_active(cls):
            return False

        def map_python_to_cpp_type(self, ty):
            return "void*"

        def get_current_target(self):
            return GPUTarget("cuda", 90, 32)

        def get_active_torch_device(self):
            return torch.device("cpu")

        def get_benchmarker(self):
            raise NotImplementedError("no benchmarking without a GPU")

    return FakeCudaDriver


def __getattr__(name):
    # The class needs triton; build it lazily so importing this module never requires it.
    if name == "FakeCudaDriver":
        return _make_driver_class()
    raise AttributeError(name)


def _interpreted_run(self, *args, grid, warmup, **kwargs):
    """A launch on real CPU tensors, in Triton's interpreter."""
    from triton.runtime.interpreter import InterpretedFunction

    return InterpretedFunction(self.fn).run(*args, grid=grid, warmup=warmup, **kwargs)


def _route_traced(real_run):
    """``JITFunction.run`` that refuses a launch on traced tensors and gives real tensors to
    ``real_run`` (the native launch on a GPU, :func:`_interpreted_run` on CPU).

    Dynamo captures a launch as ``triton_kernel_wrapper_mutation`` without calling ``run``,
    and that wrapper's dense implementation calls it with real tensors; a traced tensor here
    means a raw launch under ``make_fx`` / ``aot_function``, which PyTorch does not capture
    (:data:`MAKE_FX_LIMIT`). Raises :class:`UncapturedTritonLaunch` naming the kernel.
    """

    def run(self, *args, grid, warmup, **kwargs):
        if any(is_traced(a) for a in (*args, *kwargs.values())):
            name = getattr(getattr(self, "fn", None), "__name__", "kernel")
            raise UncapturedTritonLaunch(f"raw launch of {name} outside Dynamo: {MAKE_FX_LIMIT}")
        return real_run(self, *args, grid=grid, warmup=warmup, **kwargs)

    run.aliasfuzz_native = real_run
    return run


def _route_traced_launches() -> None:
    """On a GPU only the traced-tensor route is needed (idempotent)."""
    jit_function = resolve("triton.runtime.jit", "JITFunction")
    if not hasattr(jit_function.run, "aliasfuzz_native"):
        jit_function.run = _route_traced(jit_function.run)


def enabled() -> bool:
    """Whether the CPU compatibility patches are active in this process."""
    return _ENABLED


def enable() -> bool:
    """Apply the patches when there is no CUDA device; return whether they are active.

    Raises :class:`~aliasfuzz.fuzz.process.HookNotFound` if a patched Triton or torch
    function is missing. Returns False without triton (nothing done) and with a GPU (only
    the traced-tensor route of :func:`_route_traced` is installed on the native launch).
    """
    global _ENABLED
    if _ENABLED:
        # a scoped patch of JITFunction.run taken before the first enable() and restored
        # after it (tests/corpus/test_case_twins.py) puts the native launch back
        jit_function = resolve("triton.runtime.jit", "JITFunction")
        if not hasattr(jit_function.run, "aliasfuzz_native"):
            jit_function.run = _route_traced(_interpreted_run)
        return True
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    if torch.cuda.is_available():
        _route_traced_launches()
        return False
    driver = resolve("triton.runtime.driver", "driver")
    jit_function = resolve("triton.runtime.jit", "JITFunction")
    resolve("torch.utils._triton", "has_triton")
    resolve("triton.runtime.interpreter", "InterpretedFunction")
    import torch.utils._triton as torch_triton

    driver.set_active(_make_driver_class()())
    torch_triton.has_triton = lambda: True
    jit_function.run = _route_traced(_interpreted_run)
    _ENABLED = True
    return True
