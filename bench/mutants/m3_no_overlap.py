"""Inductor reinplacing treats all overlap as none.

Fault: the overlap test behind ``can_inplace``'s ``_overlap`` (the module global
``compute_overlapping_tensors`` of ``torch._inductor.fx_passes.reinplace``) reports that no
two tensors overlap, so every node sharing the argument's storage is dropped from the
later-use check and an argument that is read later is reinplaced anyway. Expected verdict:
``miscompile`` / ``unsafe-reinplace``. Pipelines: ``inductor-reinplace``, ``inductor``.
"""


def install(api):
    api.patch(
        "torch._inductor.fx_passes.reinplace", "compute_overlapping_tensors", lambda ls: set()
    )
