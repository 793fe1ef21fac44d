"""Inductor reinplacing ignores later readers through views.

Fault: in ``reinplace_inplaceable_ops_core``, ``any_use_of_views_after_node`` looks only at
the users of the mutated argument itself (not at the other nodes sharing its storage) and
counts a user that is a view op as harmless, so a value read later through a view of the
argument does not stop the reinplace. Expected verdict: ``miscompile`` (the view reads the
overwritten buffer); the oracle also calls the decision ``unsafe-reinplace``. Pipelines:
``inductor-reinplace`` (fastest), ``inductor``.
"""

_CORE = ("torch._inductor.fx_passes.reinplace", "reinplace_inplaceable_ops_core")


def install(api):
    api.mutate_source(
        *_CORE,
        [
            (
                "for view in shared_view_nodes:",
                "for view in [v for v in shared_view_nodes if v is mutated_arg]:",
            ),
            ("return all(is_meta_only_user(u) for u in node.users)", "return True"),
        ],
    )
