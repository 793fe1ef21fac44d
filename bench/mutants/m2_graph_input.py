"""Inductor reinplacing ignores that the mutated argument is a graph input.

Fault: ``can_inplace`` treats a placeholder (or a view of one) like an intermediate
buffer: it no longer requires a ``copy_`` epilogue that writes the result back into the
input, so a functional op on an input the program does not mutate is turned into an
in-place op on the caller's tensor. Expected verdict: ``miscompile`` (an input changed
after the call) / ``unsafe-reinplace``. Pipelines: ``inductor-reinplace``, ``inductor``.
"""

_CORE = ("torch._inductor.fx_passes.reinplace", "reinplace_inplaceable_ops_core")


def install(api):
    api.mutate_source(
        *_CORE,
        [
            ('if mutated_arg.op in ("placeholder", "get_attr"):\n', "if False:\n"),
            (
                'elif any(view.op in ("placeholder", "get_attr") for view in shared_view_nodes):',
                "elif False:",
            ),
        ],
    )
