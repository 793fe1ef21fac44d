"""Ground truth per reinplacing candidate on the functional FX graph a pass saw.

A candidate is a (node ``n``, mutated argument ``a``) pair: an ``index_put`` /
``_unsafe_index_put`` / view-scatter (``*_scatter`` or Inductor's ``_generalized_scatter``)
on its ``self``, a mutable argument of ``auto_functionalized`` (v1: by schema name; v2:
``_all_bases[i]``), or a ``tensors_to_clone`` entry of ``triton_kernel_wrapper_functional``.
These are the nodes ``torch/_inductor/fx_passes/reinplace.py``
(``reinplace_inplaceable_ops_core``) decides on.

Writing ``n``'s result into ``a`` in place is **safe** iff (DESIGN.md, "The oracle's ground
truth"), with F = footprint(a) in bytes of a's storage S:

1. no other mutated argument of ``n`` overlaps F (two mutated arguments of one node must
   not overlap), and a functional aten candidate (index_put, scatter) reads no other
   argument overlapping what it writes (a scatter may copy a view onto itself); a
   read-only argument of a custom op / Triton kernel on the same storage is what eager
   passed it, so the in-place call reproduces eager (see ``_other_slots``);
2. no node after ``n`` reads an element of F through any value on S expecting the old
   contents; a read is not "old" when an epilogue ``copy_`` between ``n`` and the reader
   has overwritten it; view ops and ``sym_size``-like ops are meta-only (their users read);
   a scatter reads its input outside the scattered view only; outputs are readers;
3. no write into F (an epilogue ``copy_`` into an input on S) happens while ``n``'s result
   is still read afterwards (the result would be clobbered, PyTorch issue #198094);
4. when S belongs to a graph input, epilogue ``copy_`` nodes into inputs on S cover F (the
   program overwrites the caller's tensor there anyway).

Unsafe comes with a :class:`Witness` (byte, element and index of a, the conflicting node
and its index). Anything the model cannot decide (symbolic sizes outside the memory
model's fragment, a solver timeout, an unmodeled node) is unknown, never unsafe.
Layouts come from ``node.meta["val"]`` (FakeTensor), storage identity is
``StorageWeakRef`` as in ``get_node_storage`` (``torch/_inductor/fx_utils.py``).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy
import torch
import torch.fx

from aliasfuzz.oracle import memory as mem

__all__ = ["Candidate", "Truth", "Witness", "candidates", "ground_truth"]

aten = torch.ops.aten

SAFE, UNSAFE, UNKNOWN = "safe", "unsafe", "unknown"

_SCATTERS = {
    aten.slice_scatter.default: aten.slice.Tensor,
    aten.select_scatter.default: aten.select.int,
    aten.diagonal_scatter.default: aten.diagonal.default,
    aten.as_strided_scatter.default: aten.as_strided.default,
}
_META_ONLY = {
    aten.sym_size.int,
    aten.sym_stride.int,
    aten.sym_numel.default,
    aten.sym_storage_offset.default,
}


@dataclass(frozen=True)
class Candidate:
    """One (node, mutated argument) pair; ``kind``/``arg`` match :class:`Decision`'s."""

    node: str
    kind: str
    arg: str
    mutated: torch.fx.Node
    fx_node: torch.fx.Node


@dataclass(frozen=True)
class Witness:
    """Why a candidate is unsafe: a byte of the storage, a's element/index, and the node
    (``reader``) that conflicts there with its index; ``rule`` names the rule (1-4)."""

    rule: int
    byte: int
    element: int | None
    index: tuple[int, ...]
    reader: str
    reader_index: tuple[int, ...]
    message: str


@dataclass(frozen=True)
class Truth:
    """Ground truth of one candidate: ``status`` is safe, unsafe or unknown."""

    candidate: Candidate
    status: str
    witness: Witness | None = None
    reason: str = ""


# ---------------------------------------------------------------------------------------
# candidates


def _is_view(target: Any) -> bool:
    from torch.fx.passes.reinplace import _is_view_op

    return _is_view_op(target)


def _gen_scatter_targets():
    from torch._inductor.fx_passes import reinplace as rp

    return rp._generalized_scatter, rp._inplace_generalized_scatter


def candidates(graph: torch.fx.Graph) -> list[Candidate]:
    """Every reinplacing candidate of ``graph``, in graph order (see module docstring)."""
    gen, _ = _gen_scatter_targets()
    index_puts = {aten.index_put.default: "index_put", aten._unsafe_index_put.default: "index_put"}
    out: list[Candidate] = []
    for n in graph.nodes:
        if n.op != "call_function":
            continue
        t = n.target
        if t in index_puts:
            out.append(Candidate(n.name, "index_put", "self", n.args[0], n))
        elif t is gen or t in _SCATTERS:
            out.append(Candidate(n.name, "scatter", "input", n.args[0], n))
        elif t is torch.ops.higher_order.auto_functionalized:
            from torch._higher_order_ops.auto_functionalize import get_mutable_args

            names, _ = get_mutable_args(n.args[0])
            for name in names:
                if isinstance(n.kwargs.get(name), torch.fx.Node):
                    out.append(Candidate(n.name, "auto_functionalized", name, n.kwargs[name], n))
        elif t is torch.ops.higher_order.auto_functionalized_v2:
            for i, b in enumerate(n.kwargs.get("_all_bases", ())):
                if isinstance(b, torch.fx.Node):
                    out.append(
                        Candidate(n.name, "auto_functionalized_v2", f"_all_bases[{i}]", b, n)
                    )
        elif _is_triton_functional(t):
            for name in n.kwargs["tensors_to_clone"]:
                arg = n.kwargs["kwargs"].get(name)
                if isinstance(arg, torch.fx.Node):
                    out.append(Candidate(n.name, "triton_kernel_wrapper_functional", name, arg, n))
    return out


def _is_triton_functional(target: Any) -> bool:
    try:
        from torch._higher_order_ops.triton_kernel_wrap import triton_kernel_wrapper_functional
    except ImportError:  # pragma: no cover - triton-less torch builds
        return False
    return target is triton_kernel_wrapper_functional


# ---------------------------------------------------------------------------------------
# layouts and byte sets


class _Undecidable(Exception):
    """The model cannot decide this candidate (symbolic layout, unmodeled node)."""


def _val(node: Any) -> torch.Tensor | None:
    if not isinstance(node, torch.fx.Node):
        return None
    v = node.meta.get("val")
    return v if isinstance(v, torch.Tensor) else None


#: While set (a dict symbol -> int), layouts are concretized at the traced sizes.
_HINTS: dict | None = None


def _hinted(lay: mem.Layout) -> mem.Layout:
    if _HINTS is None or lay.concrete:
        return lay

    def c(e):
        return e if isinstance(e, int) else int(e.xreplace(_HINTS))

    return mem.Layout(lay.storage, c(lay.offset), tuple(map(c, lay.sizes)), tuple(map(c, lay.strides)), lay.itemsize)


def _layout(node: Any) -> mem.Layout | None:
    v = _val(node)
    if v is None or v.layout != torch.strided or not torch._C._has_storage(v):
        return None
    return _hinted(mem.layout_of(v))


def _bytes(lay: mem.Layout | None) -> np.ndarray:
    """Sorted unique byte offsets a concrete layout covers."""
    if lay is None or lay.empty:
        return np.zeros(0, dtype=np.int64)
    if not lay.concrete:
        raise _Undecidable("symbolic layout")
    e = np.array([lay.offset], dtype=np.int64)
    for size, stride in zip(lay.sizes, lay.strides, strict=True):
        e = (e[:, None] + np.arange(size, dtype=np.int64)[None, :] * stride).reshape(-1)
    k = lay.itemsize
    return np.unique((e[:, None] * k + np.arange(k, dtype=np.int64)[None, :]).reshape(-1))


def _index_of(lay: mem.Layout, byte: int) -> tuple[int, tuple[int, ...]]:
    """(element, index tuple) of ``lay`` covering ``byte`` (concrete, byte in layout)."""
    import itertools

    elem = byte // lay.itemsize
    for idx in itertools.product(*(range(s) for s in lay.sizes)):
        if lay.offset + sum(i * s for i, s in zip(idx, lay.strides, strict=False)) == elem:
            return elem, tuple(idx)
    return elem, ()


def _scatter_view(node: torch.fx.Node) -> mem.Layout | None:
    """Layout of the view a scatter node writes into its input (in the input's storage)."""
    gen, igen = _gen_scatter_targets()
    inp = _val(node.args[0])
    if inp is None:
        return None
    if node.target in (gen, igen):
        views = [(v.target, v.args, v.kwargs) for v in node.args[2]]
    else:
        views = [(_SCATTERS[node.target], tuple(node.args[2:]), dict(node.kwargs))]
    fake_mode = getattr(inp, "fake_mode", None)
    if fake_mode is None:
        raise _Undecidable("scatter input has no fake mode")
    with fake_mode:
        t = inp
        for target, args, kwargs in views:
            args = torch.fx.node.map_arg(args, lambda a: a.meta["val"])
            kwargs = torch.fx.node.map_arg(kwargs, lambda a: a.meta["val"])
            t = target(t, *args, **kwargs)
    return _hinted(mem.layout_of(t, storage=mem.layout_of(inp).storage))


# ---------------------------------------------------------------------------------------
# reads and writes of one node


@dataclass(frozen=True)
class _Access:
    """A read of ``value``'s whole layout, minus the bytes of ``scatter`` (a scatter node
    reads its input everywhere except the view it replaces)."""

    value: torch.fx.Node
    scatter: torch.fx.Node | None = None

    @property
    def bytes(self) -> np.ndarray:
        b = _bytes(_layout(self.value))
        if self.scatter is not None:
            b = np.setdiff1d(b, _bytes(_scatter_view(self.scatter)), assume_unique=True)
        return b


def _tensor_nodes(x: Any) -> list[torch.fx.Node]:
    found: list[torch.fx.Node] = []
    torch.fx.node.map_arg(x, lambda n: found.append(n) or n)
    return found


def _reads(m: torch.fx.Node) -> list[_Access]:
    """What ``m`` reads, as byte sets of the storages of the values it reads."""
    gen, igen = _gen_scatter_targets()
    if m.op == "output":
        return [_Access(v) for v in _tensor_nodes(m.args)]
    if m.op != "call_function":
        return []
    t = m.target
    if _is_view(t) or t in _META_ONLY or t is operator.getitem:
        return []
    if t is aten.copy_.default:
        return [_Access(m.args[1])]
    if t is gen or t is igen or t in _SCATTERS:
        return [_Access(m.args[0], m), _Access(m.args[1])]
    return [_Access(v) for v in _tensor_nodes((m.args, m.kwargs))]


def _epilogue_write(m: torch.fx.Node) -> torch.fx.Node | None:
    """The destination when ``m`` is a ``copy_`` into a graph input (or a view of one)."""
    if m.op == "call_function" and m.target is aten.copy_.default:
        return m.args[0]
    return None


# ---------------------------------------------------------------------------------------
# the rule


def ground_truth(graph: torch.fx.Graph, cand: Candidate) -> Truth:
    """Decide one candidate of ``graph`` (see the module docstring for the rule).

    With symbolic sizes (dynamic shapes) the rule runs first at the traced sizes (the
    shape environment's hints): unsafe there is a real witness. Safe must then hold for
    every size the guards allow, which :func:`_decide_symbolic` proves with
    :mod:`aliasfuzz.oracle.memory` (Z3); what it cannot prove is unknown.
    """
    global _HINTS
    shape_env = _shape_env(graph)
    try:
        if shape_env is None:
            return _decide(graph, cand)
        _HINTS = {k: sympy.Integer(v) for k, v in shape_env.var_to_val.items()}
        try:
            t = _decide(graph, cand)
        finally:
            _HINTS = None
        if t.status != SAFE:
            return t
        return _decide_symbolic(graph, cand, _guards(shape_env))
    except _Undecidable as e:
        return Truth(cand, UNKNOWN, None, str(e))


def _shape_env(graph: torch.fx.Graph) -> Any:
    """The ShapeEnv of a graph whose layouts are symbolic, else None."""
    for n in graph.nodes:
        v = _val(n)
        if v is None or not torch._C._has_storage(v):
            continue
        lay = mem.layout_of(v)
        if not lay.concrete:
            env = getattr(getattr(v, "fake_mode", None), "shape_env", None)
            if env is None:
                raise _Undecidable("symbolic layout without a shape environment")
            return env
    return None


def _guards(shape_env: Any) -> list[Any]:
    """The shape guards and symbol ranges as sympy relations (for memory's Z3 queries)."""
    from torch.utils._sympy.numbers import int_oo

    def bounded(e: Any) -> bool:
        return e not in (int_oo, -int_oo) and bool(e.is_finite)

    out = [g.expr for g in shape_env.guards if not g.expr.has(int_oo, -int_oo)]
    for sym, vr in shape_env.var_to_range.items():
        if bounded(vr.lower):
            out.append(sympy.Ge(sym, vr.lower))
        if bounded(vr.upper):
            out.append(sympy.Le(sym, vr.upper))
    return out


def _decide_symbolic(graph: torch.fx.Graph, cand: Candidate, guards: list[Any]) -> Truth:
    """Prove rules 1-4 for all sizes, conservatively: SAFE, or UNKNOWN when not proven."""
    n, a = cand.fx_node, cand.mutated
    fl = _layout(a)
    S = fl.storage

    def ov(x: mem.Layout, y: mem.Layout) -> bool:
        r = mem.overlap(x, y, guards=guards)
        if r.status is mem.Status.UNKNOWN:
            raise _Undecidable(f"overlap undecided: {r.reason}")
        return r.status is mem.Status.OVERLAPS

    def cov(x: mem.Layout, y: mem.Layout) -> bool:
        return mem.covers(x, y, guards=guards).status is mem.Coverage.COVERS

    def unproven(why: str) -> Truth:
        return Truth(cand, UNKNOWN, None, f"safe at the traced sizes; not proven for all: {why}")

    gen, igen = _gen_scatter_targets()
    is_scatter = n.target is gen or n.target is igen or n.target in _SCATTERS
    wl = _scatter_view(n) if is_scatter else fl
    for slot, v in _other_slots(cand):
        vl = _layout(v)
        if vl is None or vl.storage != S:
            continue
        if is_scatter and (vl.offset, vl.sizes, vl.strides) == (wl.offset, wl.sizes, wl.strides):
            continue
        if ov(vl, wl):
            return unproven(f"{n.name} reads {v.name} ({slot})")
    nodes = list(graph.nodes)
    overwritten: list[mem.Layout] = []
    clobbered = False
    for m in nodes[nodes.index(n) + 1 :]:
        if clobbered and _reads_result(m, cand):
            return unproven(f"an epilogue write may clobber the result read by {m.name}")
        for acc in _reads(m):
            rl = _layout(acc.value)
            if rl is None or rl.storage != S or not ov(rl, fl):
                continue
            if acc.scatter is not None and cov(_scatter_view(acc.scatter), fl):
                continue  # the scatter replaces all of F: it reads none of it
            if any(cov(d, rl) for d in overwritten):
                continue
            return unproven(f"{m.name} may read old contents through {acc.value.name}")
        dst = _epilogue_write(m)
        dl = _layout(dst) if dst is not None else None
        if dl is None or dl.storage != S:
            continue
        if not _derived_from(m.args[1], n, _result_key(cand)) and ov(dl, fl):
            clobbered = True
        overwritten.append(dl)
    inputs_on_s = any(x.op in ("placeholder", "get_attr") and on_storage(x, S) for x in nodes)
    if inputs_on_s and not any(cov(d, fl) for d in overwritten):
        return unproven("the input is not proven overwritten over the footprint")
    return Truth(cand, SAFE, None, "proven for all sizes under the guards")


def on_storage(node: Any, storage: Any) -> bool:
    """Whether FX value ``node`` is a tensor on ``storage`` (a StorageWeakRef)."""
    s = _storage_of(node)
    return s is not None and storage is not None and s == storage


def _storage_of(node: Any) -> Any:
    lay = _layout(node)
    return None if lay is None else lay.storage


def _hit(access: np.ndarray, f: np.ndarray) -> int | None:
    common = np.intersect1d(access, f, assume_unique=True)
    return int(common[0]) if common.size else None


def _unsafe(cand, rule, byte, fl, other, message) -> Truth:
    elem, idx = _index_of(fl, byte)
    olay = _layout(other) if isinstance(other, torch.fx.Node) else None
    oidx = _index_of(olay, byte)[1] if olay is not None and olay.concrete else ()
    name = other.name if isinstance(other, torch.fx.Node) else str(other)
    w = Witness(rule, byte, elem, idx, name, oidx, message)
    return Truth(cand, UNSAFE, w, message)


def _decide(graph: torch.fx.Graph, cand: Candidate) -> Truth:
    n, a = cand.fx_node, cand.mutated
    fl = _layout(a)
    if fl is None:
        return Truth(cand, UNKNOWN, None, f"{a} has no strided tensor metadata")
    S = fl.storage
    F = _bytes(fl)
    if F.size == 0:
        return Truth(cand, SAFE, None, "empty footprint")
    nodes = list(graph.nodes)
    pos = {x: i for i, x in enumerate(nodes)}
    gen, igen = _gen_scatter_targets()

    # Rule 1: n itself reads, through another argument slot, bytes it would now write.
    is_scatter = n.target is gen or n.target is igen or n.target in _SCATTERS
    wl = _scatter_view(n) if is_scatter else fl
    written = _bytes(wl)
    for slot, v in _other_slots(cand):
        if not on_storage(v, S):
            continue
        vl = _layout(v)
        if is_scatter and (vl.offset, vl.sizes, vl.strides) == (wl.offset, wl.sizes, wl.strides):
            continue  # a scatter copying a view onto itself, element by element
        hit = _hit(_bytes(vl), written)
        if hit is not None:
            return _unsafe(
                cand,
                1,
                hit,
                fl,
                v,
                f"{n.name} also reads {v.name} (argument {slot}), which overlaps {a.name}",
            )

    overwritten = np.zeros(0, dtype=np.int64)
    clobber: tuple[int, torch.fx.Node] | None = None
    inputs_on_s = [x for x in nodes if x.op in ("placeholder", "get_attr") and on_storage(x, S)]
    for m in nodes[pos[n] + 1 :]:
        # Rule 3: n's result read after a write into F clobbered it.
        if clobber is not None and _reads_result(m, cand):
            return _unsafe(
                cand,
                3,
                clobber[0],
                fl,
                clobber[1],
                f"{clobber[1].name} overwrites {a.name} while {n.name}'s result is still read by {m.name}",
            )
        # Rule 2: an old-contents read of F.
        for acc in _reads(m):
            if not on_storage(acc.value, S):
                continue
            live = np.setdiff1d(acc.bytes, overwritten, assume_unique=True)
            hit = _hit(live, F)
            if hit is not None:
                return _unsafe(
                    cand,
                    2,
                    hit,
                    fl,
                    m,
                    f"{m.name} reads the old contents of {a.name} through {acc.value.name}",
                )
        dst = _epilogue_write(m)
        if dst is not None and on_storage(dst, S):
            if _derived_from(m.args[1], n, _result_key(cand)):
                overwritten = np.union1d(overwritten, _bytes(_layout(dst)))
                continue  # the copy back that the reinplace makes redundant
            wb = _bytes(_layout(dst))
            hit = _hit(wb, F)
            if hit is not None and clobber is None:
                clobber = (hit, m)
            overwritten = np.union1d(overwritten, wb)

    # Rule 4: an input's storage must be overwritten by the program over all of F.
    if inputs_on_s:
        missing = np.setdiff1d(F, overwritten, assume_unique=True)
        if missing.size:
            return _unsafe(
                cand,
                4,
                int(missing[0]),
                fl,
                inputs_on_s[0],
                f"{a.name} lives on input {inputs_on_s[0].name}, which the program does not overwrite there",
            )
    return Truth(cand, SAFE, None, "no conflicting access")


def _other_slots(cand: Candidate) -> list[tuple[str, torch.fx.Node]]:
    """The arguments of ``cand.fx_node`` whose reads conflict with writing ``cand`` in place.

    For ``index_put`` and scatters (functional aten ops) every other tensor argument. For
    the higher-order wrappers only the *other mutated* arguments (two mutated arguments
    of one node must not overlap): a read-only argument on the same storage is a value the
    eager program itself passed aliased (a functional graph names old contents by the
    values eager passed), so running the op in place reproduces eager's call.
    """
    n = cand.fx_node
    if cand.kind in ("index_put", "scatter"):
        slots = [("indices" if cand.kind == "index_put" else "src", n.args[1])]
        slots += [("values", n.args[2])] if cand.kind == "index_put" else []
    elif cand.kind == "triton_kernel_wrapper_functional":
        slots = [(k, n.kwargs["kwargs"][k]) for k in n.kwargs["tensors_to_clone"]]
    elif cand.kind == "auto_functionalized_v2":
        slots = [(f"_all_bases[{i}]", b) for i, b in enumerate(n.kwargs["_all_bases"])]
    else:
        from torch._higher_order_ops.auto_functionalize import get_mutable_args

        names, _ = get_mutable_args(n.args[0])
        slots = [(k, n.kwargs[k]) for k in names if k in n.kwargs]
    out = []
    for slot, v in slots:
        if slot == cand.arg:
            continue
        out += [(slot, x) for x in _tensor_nodes(v)]
    return out


def _result_key(cand: Candidate) -> Any:
    """Which ``getitem`` of the candidate's node carries the new value of its argument
    (None: the node itself). auto_functionalized returns the op's outputs, then the
    mutable arguments in schema order; v2 returns the op's outputs, then ``_all_bases``;
    the Triton wrapper returns a dict by argument name."""
    n = cand.fx_node
    if cand.kind == "triton_kernel_wrapper_functional":
        return cand.arg
    if cand.kind == "auto_functionalized":
        from torch._higher_order_ops.auto_functionalize import get_mutable_args

        names, _ = get_mutable_args(n.args[0])
        return len(n.args[0]._schema.returns) + names.index(cand.arg)
    if cand.kind == "auto_functionalized_v2":
        return len(n.args[0]._schema.returns) + int(cand.arg[len("_all_bases[") : -1])
    return None


def _derived_from(v: Any, n: torch.fx.Node, key: Any = None) -> bool:
    """Whether FX value ``v`` is ``n``'s result (``getitem(n, key)`` when ``key`` is not
    None), or a view of it."""
    while isinstance(v, torch.fx.Node):
        if v.op != "call_function":
            return False
        if v.target is operator.getitem and v.args[0] is n:
            return key is None or v.args[1] == key
        if v is n:
            return key is None
        if not _is_view(v.target):
            return False
        v = v.args[0]
    return False


def _reads_result(m: torch.fx.Node, cand: Candidate) -> bool:
    """Whether ``m`` reads the candidate's result (the value that would live in a)."""
    key = _result_key(cand)
    return any(_derived_from(acc.value, cand.fx_node, key) for acc in _reads(m))
