"""Witnesses by equivalent spellings: the same program written so that Inductor moves fewer bytes.

A program whose compiled code moves many times the bytes it needs
(:mod:`aliasfuzz.oracle.needed`) may have a spelling Inductor compiles well. The program is
captured once by Dynamo (``fullgraph``: its torch-level FX graph, the IR every pipeline
starts from, for generated programs and case files alike); each rule of :data:`RULES`
rewrites that graph where the rewrite provably keeps every value (the rule's docstring says
why); the rewritten graph is compiled by the same ``inductor`` pipeline. It is a witness of
a ``missed-reinplace`` when

1. it gives eager's values, inputs after the call and aliasing (the differential checks);
2. its code moves fewer bytes (:func:`aliasfuzz.passes.cost.inductor_cost`);
3. the excess grows with the tensors: with every input dimension of the largest size
   doubled (a tensor repeated along it), the excess is at least :data:`SCALING` times the
   first. A kept copy or a whole-tensor rewrite costs bytes in proportion to the tensor,
   so doubling it doubles the excess; a constant excess (scalars, a fixed-size index, a
   kernel launch) does not, and no maintainer would change a pass for it. 1.8 rather than
   2 leaves room for terms that do not scale (an index tensor, the update itself).

Rules (name -> rewrite), each applied only where its precondition holds:

* ``augmented-setitem``: ``x[s] op= c`` with basic indexing ``s`` (ints, slices, None,
  Ellipsis) is ``v = x[s]; v.op_(c); x[s] = v``; the in-place op already wrote through the
  view ``v``, so the store copies a view onto itself and is dropped: ``x[s].op_(c)``.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx

__all__ = ["RULES", "SCALING", "Witness", "find_witness", "scaled"]

#: Least growth of the excess when the inputs double along their largest dimension.
SCALING = 1.8

_INPLACE_OPERATORS = {operator.iadd: "add_", operator.isub: "sub_", operator.imul: "mul_",
                      operator.itruediv: "div_"}


@dataclass(frozen=True)
class Witness:
    """A confirmed witness: ``rule``, the ``original`` and ``spelled`` source lines, bytes
    per call of the original and the witness at the program's sizes (``bytes``) and with
    the inputs doubled (``scaled_bytes``), and ``sizes`` (largest dimension before, after)."""

    rule: str
    original: str
    spelled: str
    bytes: tuple[int, int]
    scaled_bytes: tuple[int, int]
    sizes: tuple[int, int]

    @property
    def excess(self) -> int:
        return self.bytes[0] - self.bytes[1]

    def message(self, needed: int | None) -> str:
        bound = ""
        if needed:
            bound = f" (needed {needed}: compiled/needed {self.bytes[0] / needed:.1f}x)"
        scaled_excess = self.scaled_bytes[0] - self.scaled_bytes[1]
        return (f"witness {self.rule}: `{self.original}` spelled `{self.spelled}` gives eager's "
                f"values; Inductor's code moves {self.bytes[0]} bytes per call, the witness "
                f"{self.bytes[1]}{bound}; excess {self.excess} bytes, {scaled_excess} "
                f"({scaled_excess / self.excess:.2f}x) with the largest input dimension "
                f"{self.sizes[0]} -> {self.sizes[1]}")


def _source_line(node: torch.fx.Node) -> str:
    """The user's source line a Dynamo node came from (its stack trace's last code line)."""
    lines = [ln for ln in (node.meta.get("stack_trace") or "").splitlines() if ln.strip()]
    code = [ln.strip() for ln in lines if not ln.strip().startswith(("File ", "^", "~"))]
    return code[-1] if code else ""


def _basic_index(idx: Any) -> bool:
    if isinstance(idx, tuple):
        return all(_basic_index(i) for i in idx)
    return idx is None or idx is Ellipsis or isinstance(idx, int | slice)


def _augmented_setitem(gm: torch.fx.GraphModule) -> list[tuple[str, str]]:
    """Drop ``x[s] = v`` where ``v`` is an in-place operator on the view ``x[s]`` (basic
    indexing: the view aliases ``x``, so the store copies the view onto itself)."""
    done = []
    for n in list(gm.graph.nodes):
        if n.op != "call_function" or n.target is not operator.setitem or n.users:
            continue
        base, idx, v = n.args
        if not (isinstance(v, torch.fx.Node) and v.target in _INPLACE_OPERATORS and v.args):
            continue
        view = v.args[0]
        if not (isinstance(view, torch.fx.Node) and view.target is operator.getitem
                and view.args[0] is base and view.args[1] == idx and _basic_index(idx)):
            continue
        line = re.sub(r"^def [^:]*:\s*", "", _source_line(n))  # a one-line def's body
        m = re.match(r"^(.*\])\s*(\+|-|\*|/)=\s*(.+)$", line)
        spelled = f"{m.group(1)}.{_INPLACE_OPERATORS[v.target]}({m.group(3)})" if m else "view in-place op"
        gm.graph.erase_node(n)
        done.append((line, spelled))
    return done


#: rule name -> rewrite of a Dynamo graph in place, returning ``[(original line, witness line)]``
#: (empty: the rule does not apply).
RULES: dict[str, Callable[[torch.fx.GraphModule], list[tuple[str, str]]]] = {
    "augmented-setitem": _augmented_setitem,
}


def _capture(fn: Callable, names: Sequence[str], inputs: tuple) -> tuple[torch.fx.GraphModule, list[int]] | None:
    """Dynamo's one graph of ``fn`` and, per placeholder, the input position it stands for
    (None on a graph break, or a placeholder that is not a plain input)."""
    from aliasfuzz.passes import hygiene

    box: list[torch.fx.GraphModule] = []

    def backend(gm, _example):
        box.append(gm)
        return gm.forward

    hygiene.reset_program()
    try:
        torch.compile(fn, backend=backend, fullgraph=True)(*inputs)
    except Exception:  # noqa: BLE001 - no single graph: no witness
        return None
    if len(box) != 1:
        return None
    gm, order = box[0], []
    for p in (n for n in gm.graph.nodes if n.op == "placeholder"):
        name = p.target[2:-1] if p.target.startswith("L_") and p.target.endswith("_") else None
        if name not in names:
            return None
        order.append(list(names).index(name))
    return gm, order


def _max_dim(inputs: Sequence[Any]) -> int:
    return max((d for t in inputs if isinstance(t, torch.Tensor) for d in t.shape), default=0)


def scaled(inputs: Sequence[Any]) -> tuple[Any, ...]:
    """``inputs`` with every tensor dimension of the largest size doubled (the tensor
    repeated along it; contiguous copies). Integer tensors keep their values (indices)."""
    top = _max_dim(inputs)
    out = []
    for t in inputs:
        if isinstance(t, torch.Tensor):
            for d, n in enumerate(t.shape):
                if n == top:
                    t = torch.cat([t, t], dim=d)
            t = t.clone()
        out.append(t)
    return tuple(out)


def find_witness(
    fn: Callable, names: Sequence[str], make: Callable[[], tuple],
    compile_run: Callable[[Callable, tuple], Any], same: Callable[[Callable, tuple, Any], bool],
) -> Witness | None:
    """The first rule of :data:`RULES` whose spelling of ``fn`` is a witness (module doc).

    ``compile_run(f, inputs)`` runs ``f`` through the full ``inductor`` pipeline and returns
    its Execution (with ``cost``); ``same(f, inputs, execution)`` says whether the run gives
    eager's results for ``f`` on ``inputs``."""
    from aliasfuzz.passes.cost import total

    got = _capture(fn, names, make())
    if got is None:
        return None
    gm, order = got
    for rule, rewrite in RULES.items():
        copy = torch.fx.GraphModule(gm, _copy_graph(gm.graph))
        lines = rewrite(copy)
        if not lines:
            continue
        copy.recompile()

        def spelled(*ins, _gm=copy, _order=tuple(order)):
            return _gm(*[ins[i] for i in _order])

        sizes, measured = [], []
        for inputs in (make, lambda: scaled(make())):
            ins = inputs()
            sizes.append(_max_dim(ins))
            orig, wit = compile_run(fn, inputs()), compile_run(spelled, ins)
            if not (orig.ok and wit.ok and orig.cost and wit.cost and same(fn, inputs(), wit)):
                break
            measured.append((total(orig.cost)["bytes"], total(wit.cost)["bytes"]))
        if len(measured) < 2 or sizes[1] <= sizes[0]:
            continue
        (b0, w0), (b1, w1) = measured
        if w0 >= b0 or (b1 - w1) < SCALING * (b0 - w0):
            continue
        return Witness(rule, lines[0][0], lines[0][1], (b0, w0), (b1, w1), (sizes[0], sizes[1]))
    return None


def _copy_graph(graph: torch.fx.Graph) -> torch.fx.Graph:
    new = torch.fx.Graph()
    out = new.graph_copy(graph, {})
    new.output(out)
    for a, b in zip(graph.nodes, new.nodes, strict=False):
        b.meta = dict(a.meta)
    return new
