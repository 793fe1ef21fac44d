"""Decision capture: every reinplacing candidate of a graph and what the pass did with it.

:class:`InductorCapture` snapshots the candidates of the graph Inductor's
``reinplace_inplaceable_ops`` receives and reads each one's decision after the pass
(``torch/_inductor/fx_passes/reinplace.py``, torch 2.13); :func:`fx_reinplace_decisions`
does the same for ``torch.fx.passes.reinplace``. How each node kind records its decision
(``shared/notes/pytorch-seams.md`` §1):

=============================== ======================== ===================================
kind                            candidates (before)      decision (after)
=============================== ======================== ===================================
auto_functionalized (v1)        non-None mutable args    name not in
                                                         ``meta["only_clone_these_tensors"]``
auto_functionalized_v2          ``_all_bases[i]``        ``i`` not in that meta list
triton_kernel_wrapper_functional ``tensors_to_clone``    name dropped from the kwarg
index_put / foreach             arg 0                    target became the in-place op
scatter (``*_scatter``)         arg 0 (the base)         its ``_generalized_scatter`` became
                                                         ``_inplace_generalized_scatter``
copy_epilogue                   ``copy_(input, src)``    the ``copy_`` node was erased
                                of a candidate's result
inplaceable (fx reinplace)      arg 0 of an op with an   target became the in-place op
                                in-place overload
=============================== ======================== ===================================

Scatter nodes are replaced by new ``_generalized_scatter`` nodes before the decision
(and two nested scatters are fused into one), so the capture also wraps the pass's core
and matches each new node to the scatters it replaced.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx

from aliasfuzz.passes.execution import Decision
from aliasfuzz.passes.hygiene import resolve
from aliasfuzz.passes.tracing import copy_graph_module, node_line

__all__ = ["InductorCapture", "fx_reinplace_decisions", "locate"]

_HOP = torch.ops.higher_order


def _nbytes(value: Any) -> int | None:
    """Bytes of a node's tensor value (summed over a list), None when symbolic or absent."""
    if isinstance(value, torch.fx.Node):
        value = value.meta.get("val")
    if isinstance(value, list | tuple):
        parts = [_nbytes(v) for v in value]
        return None if any(p is None for p in parts) else sum(parts)  # type: ignore[misc]
    if isinstance(value, torch.Tensor):
        n, k = value.numel(), value.element_size()
        if isinstance(n, int) and isinstance(k, int):
            return n * k
    return None


def _name(value: Any) -> str:
    if isinstance(value, torch.fx.Node):
        return value.name
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_name(v) for v in value) + "]"
    return repr(value)


@dataclass
class _Candidate:
    node: torch.fx.Node
    kind: str
    arg: str
    arg_value: Any
    line_node: torch.fx.Node
    reinplaced: bool | None = None
    reason: str = ""
    target: str = ""


def locate(filename: str | None, statement_at: Callable[[int], int | None] | None):
    """A function ``node -> (line, statement)`` for nodes traced from ``filename``."""

    def find(node: torch.fx.Node) -> tuple[int | None, int | None]:
        line = node_line(node, filename)
        if line is None or statement_at is None:
            return line, None
        return line, statement_at(line)

    return find


def _to_decisions(cands: list[_Candidate], find) -> list[Decision]:
    out = []
    for c in cands:
        line, stmt = find(c.line_node)
        if line is None and c.line_node is not c.node:
            line, stmt = find(c.node)
        out.append(
            Decision(
                node=c.node.name,
                kind=c.kind,
                arg=c.arg,
                reinplaced=c.reinplaced,  # type: ignore[arg-type]  (None: not captured)
                nbytes=_nbytes(c.arg_value),
                statement=stmt,
                target=c.target,
                reason=c.reason,
                line=line,
                arg_node=_name(c.arg_value),
            )
        )
    return out


class InductorCapture:
    """One call of Inductor's reinplace pass: the graph before, candidates and decisions.

    Built by the spy before the pass runs (``graph`` still unmodified); the spy then calls
    :meth:`before_core` / :meth:`after_core` around ``reinplace_inplaceable_ops_core`` and
    :meth:`finish` after the pass. ``graph_before`` is a copy of the graph module with its
    FakeTensor meta; ``graph_after`` the module after the pass (the live object).
    """

    def __init__(self, graph: torch.fx.Graph):
        self._rp = resolve("torch._inductor.fx_passes", "reinplace")
        self.graph_before = copy_graph_module(graph.owning_module)
        self.graph_after: torch.fx.GraphModule | None = None
        self.candidates: list[_Candidate] = []
        self.counters: dict[str, int] = {}
        self._generalized: dict[torch.fx.Node, torch.fx.Node] = {}
        self._scatters: list[tuple[torch.fx.Node, tuple, dict]] = []
        self._by_node: dict[torch.fx.Node, _Candidate] = {}
        self._snapshot(graph)

    # -- before the pass -------------------------------------------------------------
    def _add(self, node, kind, arg, value, line_node=None, target=""):
        c = _Candidate(node, kind, arg, value, line_node or node, target=target)
        self.candidates.append(c)
        self._by_node.setdefault(node, c)
        return c

    def _snapshot(self, graph: torch.fx.Graph) -> None:
        rp = self._rp
        get_mutable_args = resolve("torch._higher_order_ops.auto_functionalize", "get_mutable_args")
        scatter_ops = rp._SCATTER_OP_TO_VIEW
        for node in graph.nodes:
            t = node.target
            if node.op != "call_function":
                continue
            if t is _HOP.auto_functionalized:
                names, _ = get_mutable_args(node.args[0])
                for n in names:
                    if node.kwargs.get(n) is not None:
                        self._add(
                            node, "auto_functionalized", n, node.kwargs[n], target=str(node.args[0])
                        )
            elif t is _HOP.auto_functionalized_v2:
                for i, base in enumerate(node.kwargs["_all_bases"]):
                    self._add(
                        node,
                        "auto_functionalized_v2",
                        f"_all_bases[{i}]",
                        base,
                        target=str(node.args[0]),
                    )
            elif t is rp.triton_kernel_wrapper_functional:
                for n in node.kwargs["tensors_to_clone"]:
                    self._add(node, "triton_kernel_wrapper_functional", n, node.kwargs["kwargs"][n])
            elif t in rp.inplaceable_ops and t is not rp._generalized_scatter:
                self._add(node, "index_put", "self", node.args[0], target=str(t))
            elif t in rp.inplaceable_foreach_ops:
                self._add(node, "foreach", "self", node.args[0], target=str(t))
            elif t in scatter_ops:
                # The written value's statement: through nested scatters to the update.
                src = node.args[1]
                while isinstance(src, torch.fx.Node) and src.target in scatter_ops:
                    src = src.args[1]
                line_node = src if isinstance(src, torch.fx.Node) else node
                self._add(node, "scatter", "input", node.args[0], line_node, target=str(t))
                self._scatters.append((node, tuple(node.args), dict(node.kwargs)))
        for node in graph.nodes:
            if node.target is torch.ops.aten.copy_.default and node.args[0].op == "placeholder":
                owner = self._owner(node.args[1])
                # v2's getitem is not looked through by the pass: its copy_ stays and
                # becomes a self-copy after decomposition, so it is no candidate.
                if owner is not None and owner.kind != "auto_functionalized_v2":
                    self._add(
                        node, "copy_epilogue", node.args[0].name, node.args[0], owner.line_node
                    )

    def _owner(self, src: Any) -> _Candidate | None:
        """The candidate whose result ``src`` is (through getitem and views), if any."""
        is_view = resolve("torch.fx.passes.reinplace", "_is_view_op")
        while isinstance(src, torch.fx.Node):
            if src in self._by_node:
                return self._by_node[src]
            if src.target is operator.getitem or is_view(src.target):
                src = src.args[0]
                continue
            return None
        return None

    # -- around the core -------------------------------------------------------------
    def before_core(self, graph: torch.fx.Graph) -> None:
        """Match every ``_generalized_scatter`` to the original scatter(s) it replaced."""
        rp = self._rp
        generalized = list(graph.find_nodes(op="call_function", target=rp._generalized_scatter))
        replaced: dict[torch.fx.Node, torch.fx.Node] = {}
        unmatched = list(self._scatters)
        for g in generalized:
            inp, _src, view_ops = g.args
            first = view_ops[0]
            for k, (s, args, kwargs) in enumerate(unmatched):
                base = replaced.get(args[0], args[0])
                if (
                    base is inp
                    and rp._SCATTER_OP_TO_VIEW[s.target] == first.target
                    and tuple(args[2:]) == tuple(first.args)
                    and kwargs == dict(first.kwargs)
                ):
                    replaced[s] = g
                    del unmatched[k]
                    break
        changed = True
        while changed:  # the inner scatter of a fused pair lives on in its outer's node
            changed = False
            for k, (s, _a, _kw) in enumerate(unmatched):
                outer = next((o for o, a, _ in self._scatters if a[1] is s and o in replaced), None)
                if outer is not None:
                    replaced[s] = replaced[outer]
                    del unmatched[k]
                    changed = True
                    break
        self._generalized = replaced

    def after_core(self, graph: torch.fx.Graph) -> None:
        """Read scatter decisions while the generalized nodes still exist."""
        rp = self._rp
        for c in self.candidates:
            if c.kind != "scatter":
                continue
            g = self._generalized.get(c.node)
            if g is None:
                c.reason = "generalized scatter not found (capture gap)"
                continue
            c.reinplaced = g.target is rp._inplace_generalized_scatter
            if not c.reinplaced and not rp.should_reinplace_scatter(g):
                c.reason = "should_reinplace_scatter declined (fusion heuristic)"

    # -- after the pass --------------------------------------------------------------
    def finish(self, graph: torch.fx.Graph) -> None:
        """Read the decisions of all non-scatter candidates from the rewritten graph."""
        self.graph_after = graph.owning_module
        owners: dict[torch.fx.Node, _Candidate] = {}
        for c in self.candidates:
            n = c.node
            if c.kind in ("auto_functionalized", "auto_functionalized_v2"):
                kept = n.meta.get("only_clone_these_tensors")
                if kept is None:
                    c.reason = "no only_clone_these_tensors after the pass (capture gap)"
                    continue
                key = (
                    c.arg
                    if c.kind == "auto_functionalized"
                    else int(c.arg[len("_all_bases[") : -1])
                )
                c.reinplaced = key not in kept
            elif c.kind == "triton_kernel_wrapper_functional":
                c.reinplaced = c.arg not in n.kwargs["tensors_to_clone"]
            elif c.kind in ("index_put", "foreach"):
                c.reinplaced = not n._erased and _is_inplace_target(n.target)
            elif c.kind == "copy_epilogue":
                owners[n] = c
        for n, c in owners.items():
            c.reinplaced = bool(n._erased)

    def decisions(self, find) -> list[Decision]:
        """The captured decisions, with source lines found by ``find`` (see :func:`locate`)."""
        return _to_decisions(self.candidates, find)


def _is_inplace_target(target: Any) -> bool:
    rp = resolve("torch._inductor.fx_passes", "reinplace")
    inplace = {v.inplace_op for v in rp.inplaceable_ops.values()}
    inplace |= {v.inplace_op for v in rp.inplaceable_foreach_ops.values()}
    return target in inplace


class FxCapture:
    """Candidates of ``torch.fx.passes.reinplace``: ops with an in-place overload."""

    def __init__(self, gm: torch.fx.GraphModule):
        maybe_inplace = resolve("torch.fx.passes.reinplace", "_maybe_get_inplace_op")
        self.candidates: list[_Candidate] = []
        for node in gm.graph.nodes:
            if node.op != "call_function" or not node.args:
                continue
            inplace = maybe_inplace(node.target)
            if inplace is None or not isinstance(node.args[0], torch.fx.Node):
                continue
            c = _Candidate(node, "inplaceable", "self", node.args[0], node, target=str(node.target))
            c.inplace_target = inplace  # type: ignore[attr-defined]
            self.candidates.append(c)

    def finish(self) -> None:
        for c in self.candidates:
            c.reinplaced = (not c.node._erased) and c.node.target is c.inplace_target  # type: ignore[attr-defined]


def fx_reinplace_decisions(capture: FxCapture, find) -> list[Decision]:
    """Decisions of ``torch.fx.passes.reinplace`` after :meth:`FxCapture.finish`."""
    capture.finish()
    return _to_decisions(capture.candidates, find)
