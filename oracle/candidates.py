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
3. no write into F (an epilogue ``copy_`` into an input on S, or a later candidate the
   pass wrote in place on S) happens while ``n``'s result is still read afterwards (the
   result would be clobbered, PyTorch issue #198094);
4. when S belongs to a graph input, epilogue ``copy_`` nodes into inputs on S cover F (the
   program overwrites the caller's tensor there anyway);
5. when S belongs to a graph input, no graph output that eager returns as fresh memory is
   ``n``'s result (or a view of it): in place it would come back aliasing the input
   (PyTorch issue #198094, case b03). Applied only where the caller maps graph outputs to
   the program's (``fresh_outputs``).

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

from aliasfuzz.oracle import footprints as _fp
from aliasfuzz.oracle import memory as mem
from aliasfuzz.oracle.footprints import (
    _SCATTERS,
    _bytes,
    _epilogue_write,
    _gen_scatter_targets,
    _hit,
    _index_of,
    _is_view,
    _layout,
    _reads,
    _scatter_view,
    _tensor_nodes,
    _TooLarge,
    _Undecidable,
    _val,
    on_storage,
)

__all__ = ["Candidate", "Truth", "Witness", "candidates", "ground_truth", "is_view_scatter"]

aten = torch.ops.aten

SAFE, UNSAFE, UNKNOWN = "safe", "unsafe", "unknown"


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
    (``reader``) that conflicts there with its index; ``rule`` names the rule (1-5)."""

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
    #: safe only as scratch: the write lands on a graph input's storage, and an epilogue
    #: ``copy_`` of a value not computed from the candidate's result overwrites part of it
    #: afterwards (so the caller never sees what was written; see :func:`_derived`)
    scratch: bool = False


_INDEX_PUTS = (aten.index_put.default, aten._unsafe_index_put.default)


def candidates(graph: torch.fx.Graph) -> list[Candidate]:
    """Every reinplacing candidate of ``graph``, in graph order (see module docstring)."""
    return [c for n in graph.nodes for c in candidates_of(n)]


def is_view_scatter(n: Any, inplace: bool = False) -> bool:
    """Whether ``n`` is a view-scatter node: ``slice/select/diagonal/as_strided_scatter`` or
    Inductor's ``_generalized_scatter`` (and, with ``inplace``, the
    ``_inplace_generalized_scatter`` the reinplace pass turns one into)."""
    if not isinstance(n, torch.fx.Node) or n.op != "call_function":
        return False
    gen, gen_ = _gen_scatter_targets()
    return n.target is gen or n.target in _SCATTERS or (inplace and n.target is gen_)


def candidates_of(n: torch.fx.Node) -> list[Candidate]:
    """The reinplacing candidates of one node (none for most nodes)."""
    if n.op != "call_function":
        return []
    t = n.target
    if t in _INDEX_PUTS:
        return [Candidate(n.name, "index_put", "self", n.args[0], n)]
    if is_view_scatter(n):
        return [Candidate(n.name, "scatter", "input", n.args[0], n)]
    out: list[Candidate] = []
    if t is torch.ops.higher_order.auto_functionalized:
        from torch._higher_order_ops.auto_functionalize import get_mutable_args

        names, _ = get_mutable_args(n.args[0])
        for name in names:
            if isinstance(n.kwargs.get(name), torch.fx.Node):
                out.append(Candidate(n.name, "auto_functionalized", name, n.kwargs[name], n))
    elif t is torch.ops.higher_order.auto_functionalized_v2:
        for i, b in enumerate(n.kwargs.get("_all_bases", ())):
            if isinstance(b, torch.fx.Node):
                out.append(Candidate(n.name, "auto_functionalized_v2", f"_all_bases[{i}]", b, n))
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
# the rule


def ground_truth(
    graph: torch.fx.Graph,
    cand: Candidate,
    inplace: frozenset[tuple[str, str]] = frozenset(),
    fresh_outputs: frozenset[int] | None = None,
) -> Truth:
    """Decide one candidate of ``graph`` (see the module docstring for the rule).

    With symbolic sizes (dynamic shapes) the rule runs first at the traced sizes (the
    shape environment's hints): unsafe there is a real witness. Safe must then hold for
    every size the guards allow, which :func:`_decide_symbolic` proves with
    :mod:`aliasfuzz.oracle.memory` (Z3); what it cannot prove is unknown. A footprint too
    large to enumerate (:data:`aliasfuzz.oracle.footprints.BYTE_LIMIT`) is decided the same
    way, by the memory model on the concrete layouts: safe when proven, else unknown.
    ``fresh_outputs``: positions of the graph's outputs that are fresh memory in eager, when
    the caller knows how graph outputs map to the program's (rule 5); None skips rule 5.
    """
    shape_env = _shape_env(graph)
    try:
        if shape_env is None:
            try:
                return _decide(graph, cand, inplace, fresh_outputs)
            except _TooLarge as e:
                return _decide_symbolic(graph, cand, [], inplace, large=str(e))
        # backed_var_to_val: torch 2.13's name (var_to_val warns there); 2.11 has only the latter
        hints = getattr(shape_env, "backed_var_to_val", None)
        hints = shape_env.var_to_val if hints is None else hints
        _fp._HINTS = {k: sympy.Integer(v) for k, v in hints.items()}
        large = None
        try:
            t = _decide(graph, cand, inplace, fresh_outputs)
        except _TooLarge as e:
            t, large = Truth(cand, SAFE), str(e)  # no witness at the hints: prove or unknown
        finally:
            _fp._HINTS = None
        if t.status != SAFE:
            return t
        return _decide_symbolic(graph, cand, _guards(shape_env), inplace, large=large)
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


def _decide_symbolic(
    graph: torch.fx.Graph,
    cand: Candidate,
    guards: list[Any],
    inplace: frozenset = frozenset(),
    large: str | None = None,
) -> Truth:
    """Prove rules 1-4 for all sizes, conservatively: SAFE, or UNKNOWN when not proven.

    Also the path for concrete layouts whose footprints are too large to enumerate
    (``large`` says why; rule 5 was checked before the enumeration gave up): every overlap
    and coverage question goes to :mod:`aliasfuzz.oracle.memory`, whose fast paths are
    bounded and whose last resort is Z3.
    """
    n, a = cand.fx_node, cand.mutated
    fl = _layout(a)
    if fl is None:
        return Truth(cand, UNKNOWN, None, f"{a} has no strided tensor metadata")
    S = fl.storage

    def ov(x: mem.Layout, y: mem.Layout) -> bool:
        r = mem.overlap(x, y, guards=guards)
        if r.status is mem.Status.UNKNOWN:
            raise _Undecidable(f"overlap undecided: {r.reason}")
        return r.status is mem.Status.OVERLAPS

    def cov(x: mem.Layout, y: mem.Layout) -> bool:
        return mem.covers(x, y, guards=guards).status is mem.Coverage.COVERS

    result = _result_values(graph, cand, inplace)

    def unproven(why: str) -> Truth:
        if large is not None:
            return Truth(cand, UNKNOWN, None, f"{large}; the memory model did not prove it safe: {why}")
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
    derived = _derived(nodes[nodes.index(n) + 1 :], result)
    scratch: torch.fx.Node | None = None
    for m in nodes[nodes.index(n) + 1 :]:
        if clobbered and _reads_any(m, result):
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
        for c in candidates_of(m):  # writes the pass made in place on S (as in _decide)
            if (c.node, c.arg) not in inplace or c.mutated in result or not on_storage(c.mutated, S):
                continue
            cl = _scatter_view(m) if c.kind == "scatter" else _layout(c.mutated)
            if cl is None:
                continue
            if ov(cl, fl):
                clobbered = True
            overwritten.append(cl)
        dst = _epilogue_write(m)
        dl = _layout(dst) if dst is not None else None
        if dl is None or dl.storage != S:
            continue
        if m.args[1] not in result and ov(dl, fl):
            clobbered = True
            if m.args[1] not in derived:
                scratch = m
        overwritten.append(dl)
    inputs_on_s = [x for x in nodes if x.op in ("placeholder", "get_attr") and on_storage(x, S)]
    if inputs_on_s and large is not None and not overwritten:  # exact: nothing writes S
        return _unsafe(
            cand,
            4,
            fl.offset * fl.itemsize,
            fl,
            inputs_on_s[0],
            f"{a.name} lives on input {inputs_on_s[0].name}, which the program does not "
            "overwrite there",
        )
    if inputs_on_s and not any(cov(d, fl) for d in overwritten):
        return unproven("the input is not proven overwritten over the footprint")
    if inputs_on_s and scratch is not None:
        return _scratch(cand, inputs_on_s[0], scratch)
    if large is not None:
        return Truth(cand, SAFE, None, f"{large}; proven safe with the memory model")
    return Truth(cand, SAFE, None, "proven for all sizes under the guards")


def _unsafe(cand, rule, byte, fl, other, message) -> Truth:
    elem, idx = _index_of(fl, byte)
    olay = _layout(other) if isinstance(other, torch.fx.Node) else None
    oidx = _index_of(olay, byte)[1] if olay is not None and olay.concrete else ()
    name = other.name if isinstance(other, torch.fx.Node) else str(other)
    w = Witness(rule, byte, elem, idx, name, oidx, message)
    return Truth(cand, UNSAFE, w, message)


def _decide(
    graph: torch.fx.Graph,
    cand: Candidate,
    inplace: frozenset = frozenset(),
    fresh_outputs: frozenset[int] | None = None,
) -> Truth:
    n, a = cand.fx_node, cand.mutated
    fl = _layout(a)
    if fl is None:
        return Truth(cand, UNKNOWN, None, f"{a} has no strided tensor metadata")
    S = fl.storage
    nodes = list(graph.nodes)
    pos = {x: i for i, x in enumerate(nodes)}
    gen, igen = _gen_scatter_targets()
    result = _result_values(graph, cand, inplace)
    inputs_on_s = [x for x in nodes if x.op in ("placeholder", "get_attr") and on_storage(x, S)]
    # Rule 5, before the empty-footprint shortcut (it is about identity, not bytes): a
    # graph output that eager returns as fresh memory must not become n's result written
    # into an input's storage (it would come back aliasing the input, #198094).
    out = next((m for m in reversed(nodes) if m.op == "output"), None)
    if inputs_on_s and fresh_outputs and out is not None:
        rets = out.args[0] if isinstance(out.args[0], list | tuple) else (out.args[0],)
        for k, v in enumerate(rets):
            if k in fresh_outputs and v in result:
                return _unsafe(
                    cand,
                    5,
                    fl.offset * fl.itemsize,  # the first byte (strides are never negative)
                    fl,
                    out,
                    f"output {k} is fresh in eager, but {n.name}'s result written into "
                    f"{a.name} would alias input {inputs_on_s[0].name} (PyTorch issue #198094)",
                )
    F = _bytes(fl)  # after rule 5: a footprint too large to enumerate raises _TooLarge
    if F.size == 0:
        return Truth(cand, SAFE, None, "empty footprint")

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
    derived = _derived(nodes[pos[n] + 1 :], result)
    scratch: torch.fx.Node | None = None
    for m in nodes[pos[n] + 1 :]:
        # Rule 3: n's result read after a write into F clobbered it.
        if clobber is not None and _reads_any(m, result):
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
        # Writes by candidates the pass made in place on S (not into n's own result).
        for c in candidates_of(m):
            if (c.node, c.arg) not in inplace or c.mutated in result or not on_storage(c.mutated, S):
                continue
            wb = _bytes(_scatter_view(m) if c.kind == "scatter" else _layout(c.mutated))
            hit = _hit(wb, F)
            if hit is not None and clobber is None:
                clobber = (hit, m)
            overwritten = np.union1d(overwritten, wb)
        dst = _epilogue_write(m)
        if dst is not None and on_storage(dst, S):
            if m.args[1] in result:
                overwritten = np.union1d(overwritten, _bytes(_layout(dst)))
                continue  # the copy back that the reinplace makes redundant
            wb = _bytes(_layout(dst))
            hit = _hit(wb, F)
            if hit is not None and m.args[1] not in derived:
                scratch = m
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
        if scratch is not None:
            return _scratch(cand, inputs_on_s[0], scratch)
    return Truth(cand, SAFE, None, "no conflicting access")


def _derived(after: list[torch.fx.Node], result: set[torch.fx.Node]) -> set[torch.fx.Node]:
    """The nodes of ``after`` whose value is computed, directly or not, from ``result``."""
    out = set(result)
    for m in after:
        if m not in out and any(x in out for x in m.all_input_nodes):
            out.add(m)
    return out


def _scratch(cand: Candidate, inp: torch.fx.Node, copy: torch.fx.Node) -> Truth:
    # sixteenth audit 0795905a61: writing a clone's value into a caller's storage is value
    # safe only because the epilogue later overwrites it from another value, so the pass
    # would be using the caller's tensor as scratch space for the copy the program asks for
    return Truth(cand, SAFE, None, (
        f"no conflicting access, but only as scratch: {cand.mutated.name} lives on input "
        f"{inp.name}, which {copy.name} then overwrites from {copy.args[1].name}, a value not "
        f"computed from {cand.fx_node.name}'s result"), scratch=True)


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
    (None: the node itself). auto_functionalized returns ``(*out, *mutable args)`` when
    the op returns a tuple, else ``(out, *mutable args)`` (``out`` may be None), mutable
    arguments in schema order; v2 the same with ``_all_bases`` (``auto_functionalize.py``,
    ``auto_functionalized_dense`` / ``auto_functionalized_v2_dense``); the Triton wrapper
    returns a dict by argument name."""
    n = cand.fx_node
    if cand.kind == "triton_kernel_wrapper_functional":
        return cand.arg
    if cand.kind not in ("auto_functionalized", "auto_functionalized_v2"):
        return None
    n_returns = len(n.args[0]._schema.returns)
    first = n_returns if n_returns > 1 else 1
    if cand.kind == "auto_functionalized":
        from torch._higher_order_ops.auto_functionalize import get_mutable_args

        names, _ = get_mutable_args(n.args[0])
        return first + names.index(cand.arg)
    return first + int(cand.arg[len("_all_bases[") : -1])


def _wrapper_results(m: torch.fx.Node) -> dict[Any, tuple[str, torch.fx.Node]]:
    """For a wrapper node: getitem key -> (candidate arg, mutated FX value)."""
    out: dict[Any, tuple[str, torch.fx.Node]] = {}
    for c in candidates_of(m):
        out[_result_key(c)] = (c.arg, c.mutated)
    return out


def _result_values(
    graph: torch.fx.Graph, cand: Candidate, inplace: frozenset[tuple[str, str]]
) -> set[torch.fx.Node]:
    """The FX values that hold ``cand``'s result once it is written into its argument:
    the result (``getitem`` for wrappers), views of those, and the results of candidates
    the pass wrote in place into one of those (``inplace``)."""
    n, key = cand.fx_node, _result_key(cand)
    nodes = list(graph.nodes)
    result: set[torch.fx.Node] = set() if key is not None else {n}
    gen, igen = _gen_scatter_targets()
    for m in nodes[nodes.index(n) + 1 :]:
        if m.op != "call_function":
            continue
        src = m.args[0] if m.args else None
        if m.target is operator.getitem:
            if src is n and m.args[1] == key:
                result.add(m)
            elif src in result:
                result.add(m)  # a piece of a multi-output view (unbind, split) of the result
            elif isinstance(src, torch.fx.Node) and src is not n:
                arg = _wrapper_results(src).get(m.args[1])
                if arg is not None and (src.name, arg[0]) in inplace and arg[1] in result:
                    result.add(m)
        elif _is_view(m.target) and src in result:
            result.add(m)
        elif src in result and (m.name, "self" if m.target in _INDEX_PUTS else "input") in inplace:
            result.add(m)  # an index_put / scatter written in place into the result
        elif src in result and m.target in (gen, igen) and (m.name, "input") in inplace:
            result.add(m)
    return result


def _reads_any(m: torch.fx.Node, values: set[torch.fx.Node]) -> bool:
    """Whether ``m`` reads one of ``values``."""
    return any(acc.value in values for acc in _reads(m))
