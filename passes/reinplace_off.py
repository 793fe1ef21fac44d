"""The reinplace pass switched off for a control: every candidate declined, on torch 2.11 too.

The controls of the oracle and of blame (:meth:`PipelineOptions.with_passes_off
<aliasfuzz.passes.pipelines.PipelineOptions.with_passes_off>`) ask what the pipeline
computes *without* Inductor's reinplace pass, through ``torch._inductor.config.
disabled_passes="REINPLACE_INPLACEABLE_OPS"``. The pass is then skipped, so no
``auto_functionalized`` / ``auto_functionalized_v2`` node gets its decision,
``node.meta["only_clone_these_tensors"]``. What the later ``decompose_auto_functionalized``
does with a node that has none differs:

* torch 2.13 (``torch/_inductor/fx_passes/post_grad.py``, ``decompose_auto_functionalized``):
  ``meta.get("only_clone_these_tensors")`` is ``None``, and ``auto_functionalized_dense``
  / ``auto_functionalized_v2_dense`` clone every mutated argument: the pass declined all;
* torch 2.11 (same function): ``tuple(meta.get("only_clone_these_tensors", []))`` is
  ``()``, and the dense kernels clone *nothing*: the custom op writes its arguments in
  place whatever still reads them, i.e. every candidate is reinplaced, safe or not.

So on torch 2.11 the "pass off" control of a custom op reinplaces more than the pass
would, and departs from eager where the pipeline without the pass is right (b01's seed:
the reinplace pass's own control departed, and blame moved to ``remove_noop_ops``; seen
with plain torch, ``torch.compile`` with that config alone, on the ``y = x.sin(); w = y *
1.0; add_one_(y)`` program of ``tests/unit/test_pipelines_inductor.py``, whose ``w`` comes
back bumped). :func:`declining_everything` restores 2.13's meaning for the controls: before
the decomposition runs, a node the pass did not decide is given the decision "clone every
mutated argument" (what 2.13 does with no decision, so on 2.13 nothing changes). The
``inductor-noreinplace`` pipeline does not use it: it runs torch as configured, 2.11's
defect included (a finding there is one of torch, not of the harness).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

from aliasfuzz.passes.hygiene import resolve

__all__ = ["decline_undecided", "declining_everything"]

#: The meta key the reinplace pass writes its decision into (torch 2.11 and 2.13).
DECISION = "only_clone_these_tensors"

_ACTIVE = False


def decline_undecided(graph: torch.fx.Graph) -> int:
    """Give every ``auto_functionalized`` (v1) and ``auto_functionalized_v2`` node of
    ``graph`` that carries no reinplace decision the decision "clone every mutated argument":
    v1, the names of its non-None mutable arguments (``auto_functionalize.get_mutable_args``,
    as ``torch/_inductor/fx_passes/reinplace.py`` starts from); v2, the index of each of its
    ``_all_bases``. Returns how many nodes it decided. Nodes the pass decided are left alone."""
    hop = torch.ops.higher_order
    get_mutable_args = resolve("torch._higher_order_ops.auto_functionalize", "get_mutable_args")
    decided = 0
    for node in graph.nodes:
        if node.op != "call_function" or DECISION in node.meta:
            continue
        if node.target is hop.auto_functionalized_v2:
            node.meta[DECISION] = list(range(len(node.kwargs["_all_bases"])))
        elif node.target is hop.auto_functionalized:
            names, _ = get_mutable_args(node.args[0])
            node.meta[DECISION] = [n for n in names if node.kwargs.get(n) is not None]
        else:
            continue
        decided += 1
    return decided


@contextmanager
def declining_everything() -> Iterator[None]:
    """Inside the block, Inductor's ``decompose_auto_functionalized`` first applies
    :func:`decline_undecided` to its graph (``post_grad_passes`` looks the function up at
    call time, torch 2.11 and 2.13). A nested block changes nothing (the patched global is
    process-wide; the outer block restores it). Raises
    :class:`~aliasfuzz.passes.hygiene.HookNotFound` if the function moved."""
    global _ACTIVE
    if _ACTIVE:
        yield
        return
    pg = resolve("torch._inductor.fx_passes", "post_grad")
    orig = resolve("torch._inductor.fx_passes.post_grad", "decompose_auto_functionalized")

    def decompose(graph):
        decline_undecided(graph)
        return orig(graph)

    _ACTIVE = True
    pg.decompose_auto_functionalized = decompose
    try:
        yield
    finally:
        pg.decompose_auto_functionalized = orig
        _ACTIVE = False
