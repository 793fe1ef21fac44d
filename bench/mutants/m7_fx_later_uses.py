"""``torch.fx.passes.reinplace`` ignores later uses.

Fault: the module global ``_get_all_later_node_usages`` returns no usages, so ``reinplace``
turns every out-of-place op with an in-place variant into that in-place variant, even when
the overwritten argument (or an alias of it) is read later. Expected verdict:
``miscompile`` / ``unsafe-reinplace``. Pipeline: ``fx-reinplace``.
"""


def install(api):
    api.patch("torch.fx.passes.reinplace", "_get_all_later_node_usages", lambda aliases, idx: set())
