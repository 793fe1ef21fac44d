"""Triton mutation analysis reports a written argument as read-only.

Fault: ``torch._higher_order_ops.triton_kernel_wrap.get_mutated_tensors`` drops the first
argument the kernel stores to. Functionalization then records no mutation of it: the
functional wrapper neither clones it nor returns it, so the write is not copied back to
the caller's tensor (and a dead wrapper may be dropped). Expected verdict: ``miscompile``.
Pipelines: ``aot_eager``, ``inductor-reinplace`` (on CPU user kernels run interpreted,
see ``aliasfuzz.fuzz.triton_compat``).
"""

_MOD = "torch._higher_order_ops.triton_kernel_wrap"


def install(api):
    def make(original):
        def get_mutated_tensors(*args, **kwargs):
            return list(original(*args, **kwargs))[1:]

        return get_mutated_tensors

    api.wrap(_MOD, "get_mutated_tensors", make)
