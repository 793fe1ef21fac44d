"""Inductor reinplacing uses the old "more than 2 users, don't reinplace" rule.

Fault (over-conservative, a historical heuristic): ``can_inplace`` refuses any argument
with more than two users, whether or not a user reads it after the mutation. The program
stays correct but keeps a needless copy. Expected verdict: ``missed-reinplace``.
Pipelines: ``inductor-reinplace``, ``inductor``.
"""

_CORE = ("torch._inductor.fx_passes.reinplace", "reinplace_inplaceable_ops_core")


def install(api):
    api.mutate_source(
        *_CORE,
        [
            (
                "        if get_node_storage(mutated_arg) is None:\n            return False\n",
                "        if get_node_storage(mutated_arg) is None:\n            return False\n"
                "        if len(mutated_arg.users) > 2:\n            return False\n",
            )
        ],
    )
