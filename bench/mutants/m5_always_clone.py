"""Inductor reinplacing always clones.

Fault (over-conservative): ``can_inplace`` answers False for every argument, so every
functional op that could write in place (``index_put``, scatters, custom ops through
``auto_functionalized``) copies its argument first. Values stay right. Expected verdict:
``missed-reinplace``. Pipelines: ``inductor-reinplace``, ``inductor``.
"""

_CORE = ("torch._inductor.fx_passes.reinplace", "reinplace_inplaceable_ops_core")


def install(api):
    api.mutate_source(
        *_CORE,
        [
            (
                "    def can_inplace(node, mutated_arg):\n",
                "    def can_inplace(node, mutated_arg):\n        return False\n",
            )
        ],
    )
