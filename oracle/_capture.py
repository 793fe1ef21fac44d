"""Forcing Inductor's reinplace pass to write chosen candidates in place (confirmation).

Decisions are observed by :mod:`aliasfuzz.passes.spy`; this module exists for the one thing
the adapters do not offer: making a declined candidate in place, to confirm a missed
reinplace by running the result. It wraps one PyTorch internal, ``torch._inductor.fx_passes.post_grad.reinplace_inplaceable_ops`` (looked up as a
module global at call time, seams §1), replacing it with the same three steps
(``canonicalize_view_scatter_ops``, ``reinplace_inplaceable_ops_core``,
``decompose_generalized_scatter``) so that the candidates, their ground truth and the
decisions are read on the canonical graph the core sees. ``force`` makes chosen
candidates in place after the core ran (confirmation of a missed reinplace).

Checked against torch 2.13 ``torch/_inductor/fx_passes/reinplace.py`` and, for forcing a
Triton argument (``eager_input_vals`` kept in step with the node's kwargs), torch 2.11.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch

from aliasfuzz.fuzz import process
from aliasfuzz.oracle.candidates import Candidate, Truth, candidates, ground_truth

__all__ = ["PassRecord", "Seen", "watch_reinplace"]


@dataclass
class Seen:
    """One candidate as the pass saw it: its ground truth and what the pass decided."""

    graph: int
    candidate: Candidate
    truth: Truth
    reinplaced: bool | None = None
    forced: bool = False

    @property
    def key(self) -> tuple[int, str, str]:
        return (self.graph, self.candidate.node, self.candidate.arg)


@dataclass
class PassRecord:
    """What the watched pass saw in one compiled graph (graphs counted from 0)."""

    index: int
    before: str = ""
    after: str = ""
    seen: list[Seen] = field(default_factory=list)


def _reinplaced(c: Candidate) -> bool:
    """Read the pass's decision for ``c`` off its (mutated in place) node."""
    from torch._inductor.fx_passes import reinplace as rp

    n = c.fx_node
    if c.kind == "index_put":
        return n.target is not torch.ops.aten.index_put.default and n.target is not (
            torch.ops.aten._unsafe_index_put.default
        )
    if c.kind == "scatter":
        return n.target is rp._inplace_generalized_scatter
    if c.kind == "auto_functionalized":
        return c.arg not in n.meta.get("only_clone_these_tensors", [c.arg])
    if c.kind == "auto_functionalized_v2":
        i = int(c.arg[len("_all_bases[") : -1])
        return i not in n.meta.get("only_clone_these_tensors", [i])
    if c.kind == "triton_kernel_wrapper_functional":
        return c.arg not in n.kwargs["tensors_to_clone"]
    raise AssertionError(c.kind)


def _force(c: Candidate) -> None:
    """Make candidate ``c`` in place on its node, keeping the (now redundant) copies."""
    from torch._inductor import inductor_prims
    from torch._inductor.fx_passes import reinplace as rp
    from torch.fx.immutable_collections import immutable_dict, immutable_list

    n = c.fx_node
    if c.kind == "index_put":
        n.target = (
            torch.ops.aten.index_put_.default
            if n.target is torch.ops.aten.index_put.default
            else inductor_prims._unsafe_index_put_
        )
    elif c.kind == "scatter":
        n.target = rp._inplace_generalized_scatter
    elif c.kind == "auto_functionalized":
        n.meta["only_clone_these_tensors"] = [
            a for a in n.meta["only_clone_these_tensors"] if a != c.arg
        ]
    elif c.kind == "auto_functionalized_v2":
        i = int(c.arg[len("_all_bases[") : -1])
        n.meta["only_clone_these_tensors"] = [
            a for a in n.meta["only_clone_these_tensors"] if a != i
        ]
    elif c.kind == "triton_kernel_wrapper_functional":
        kw = dict(n.kwargs)
        kw["tensors_to_clone"] = [a for a in kw["tensors_to_clone"] if a != c.arg]
        n.kwargs = kw
        if "eager_input_vals" in n.meta:
            # as reinplace.py does after refining tensors_to_clone: torch 2.11's
            # Match.replace_by_example (pattern_matcher.py, should_propagate_eager_input_vals)
            # pairs the node's kwargs with this meta leaf by leaf when
            # decompose_triton_kernel_wrapper_functional rewrites the node, so a stale list
            # fails there ("Node arity mismatch"); torch 2.13 no longer reads it for this op
            args, eager_kw = n.meta["eager_input_vals"]
            n.meta["eager_input_vals"] = (
                args,
                immutable_dict({**eager_kw, "tensors_to_clone": immutable_list(kw["tensors_to_clone"])}),
            )
        # as reinplace.py does: the wrapper no longer returns c.arg, its readers read the
        # argument itself (else the dense wrapper's result has no key c.arg: KeyError)
        for user in list(n.users):
            if user.target is operator.getitem and user.args[1] == c.arg:
                user.replace_all_uses_with(n.kwargs["kwargs"][c.arg])
                n.graph.erase_node(user)


@contextlib.contextmanager
def watch_reinplace(
    records: list[PassRecord],
    force: Callable[[int, Candidate], bool] | None = None,
    truths: bool = True,
) -> Iterator[None]:
    """Within the block, every call of Inductor's reinplace pass appends a :class:`PassRecord`
    to ``records`` (candidates on the canonical graph the core sees, their ground truth when
    ``truths``, the decisions). ``force(graph_index, candidate)`` selects declined
    candidates to make in place after the core ran. Composes with
    :func:`aliasfuzz.passes.spy.reinplace_spy` entered inside the block."""
    import torch._inductor.fx_passes.post_grad as pg
    from torch._dispatch.python import enable_python_dispatcher
    from torch._inductor.fx_passes import reinplace as rp

    original = pg.reinplace_inplaceable_ops

    def watched(fake_tensor_updater, graph):
        rec = PassRecord(len(records))
        records.append(rec)
        with enable_python_dispatcher():
            rp.canonicalize_view_scatter_ops(graph)
            fake_tensor_updater.incremental_update()
            rec.before = str(graph)
            with process.harness("oracle: ground truth inside the pass"):
                rec.seen = [
                    Seen(rec.index, c, ground_truth(graph, c) if truths else Truth(c, "unknown"))
                    for c in candidates(graph)
                ]
            rp.reinplace_inplaceable_ops_core(graph)
            for s in rec.seen:
                s.reinplaced = _reinplaced(s.candidate)
                if force is not None and not s.reinplaced and force(rec.index, s.candidate):
                    _force(s.candidate)
                    s.forced = True
            rp.decompose_generalized_scatter(graph)
            rec.after = str(graph)

    pg.reinplace_inplaceable_ops = watched
    try:
        yield
    finally:
        pg.reinplace_inplaceable_ops = original
