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
is idempotent. On a GPU machine the real driver, analysis and launches are used; only a
launch on *traced* tensors outside Dynamo (``make_fx`` / ``aot_function``, which the
``inductor-reinplace`` and ``fx-reinplace`` pipelines use) is routed through
``torch.library.wrap_triton``, as on CPU: natively it would run the kernel on the fake
tensors' pointers (an illegal memory access, seen on the H200).
Inductor's own codegen of user kernels still needs a GPU: on CPU the full ``inductor``
pipeline fails at compile (``0 compatible backends for target (cpu)``), which is recorded.
"""

from __future__ import annotations

import torch

from aliasfuzz.fuzz.ops.kernels import is_traced
from aliasfuzz.passes.hygiene import resolve

__all__ = ["enable", "enabled"]  # FakeCudaDriver too, built lazily by __getattr__

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


def _traced_launch(kernel, args, kwargs, grid):
    """``kernel[grid](...)`` on traced tensors as ``triton_kernel_wrapper_mutation``, or None.

    Outside Dynamo (make_fx, aot_function) a native launch would hand fake tensors to the
    kernel (on a GPU: a launch on pointers of fake storage, an illegal memory access);
    ``torch.library.wrap_triton`` records it as Dynamo does, and the wrapper's dense
    implementation comes back to ``JITFunction.run`` with real tensors.
    """
    if not any(is_traced(a) for a in (*args, *kwargs.values())):
        return None
    wrap_triton = resolve("torch.library", "wrap_triton")
    return (wrap_triton(kernel)[grid](*args, **kwargs),)


def _interpreted_run(self, *args, grid, warmup, **kwargs):
    traced = _traced_launch(self, args, kwargs, grid)
    if traced is not None:
        return traced[0]
    from triton.runtime.interpreter import InterpretedFunction

    return InterpretedFunction(self.fn).run(*args, grid=grid, warmup=warmup, **kwargs)


def _route_traced(native_run):
    """``JITFunction.run`` for a GPU machine: traced tensors through the wrapper, else native."""

    def run(self, *args, grid, warmup, **kwargs):
        traced = _traced_launch(self, args, kwargs, grid)
        if traced is not None:
            return traced[0]
        return native_run(self, *args, grid=grid, warmup=warmup, **kwargs)

    run.aliasfuzz_native = native_run
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

    Raises :class:`~aliasfuzz.passes.hygiene.HookNotFound` if a patched Triton or torch
    function is missing. Does nothing (returns False) with a GPU or without triton.
    """
    global _ENABLED
    if _ENABLED:
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
    jit_function.run = _interpreted_run
    _ENABLED = True
    return True
