"""What Inductor's generated code costs: bytes moved per call, kernels, temporaries.

A kept copy is a claim about bytes: the generated code reads and writes more memory than
the program needs. :func:`inductor_cost` hooks ``GraphLowering.compile_to_module`` (the
scheduler is built by then) and, per lowered graph, reads the scheduler's nodes:

* ``bytes``, **loop-extent accounting** (ours): per kernel (a scheduler node, a fusion of
  them), each buffer it loads or stores counted once per distinct access, each access as the
  number of elements its index can reach over the loop extents
  (``MemoryDep.index`` / ``var_names`` / ``size``: the product of the extents of the loop
  variables the index uses; an index through a loaded value, ``tmp0``, counts every
  iteration), capped at the buffer's size; buffers a fusion writes and reads only inside
  itself are not counted (Inductor's own ``is_materialized`` rule). Reads and writes of one
  buffer count separately (a read-modify-write moves it twice). ``StarDep`` / ``WeakDep``
  of a kernel are ordering dependencies (a mutation's "this writes that buffer"), not loads.
  Extern calls (fallback ops, templates) move their whole buffers: Inductor's own
  ``get_read_write_buffer_accesses``, with two answers that depend on the call's
  surroundings replaced (:func:`_extern_bytes`).
* ``inductor_bytes``: Inductor's ``GraphLowering.count_bytes`` (``min(numel of the node's
  ranges x deps, buffer size)`` per buffer, ``BaseSchedulerNode.get_read_write_buffer_accesses``).
  Kept for reference only: it charges ``x[0:2].add_(0.5)`` on 3000 elements 12008 bytes
  (the mutation's ``StarDep`` on ``x`` counts as a read of ``x``, and the buffer the
  mutation writes is sized as all of ``x``), the loop-extent accounting 16 bytes, which is
  what the generated loop over 2 elements moves.
* ``temporaries``: buffers the scheduler keeps that are neither graph outputs nor writes
  into graph inputs (mutations), with their bytes: the allocations a reinplace would save.
* ``code_temporaries``: the same read from the generated wrapper's ``call`` instead
  (:func:`code_temporaries`: what ``TORCH_LOGS=output_code`` shows an engineer, and what a
  cost repro checks with ``run_and_get_code``); None when it cannot be read.

Mirrors ``torch/_inductor/scheduler.py`` ``BaseSchedulerNode.get_read_write_buffer_accesses``
and the ``inductor_metrics_log`` block of ``torch/_inductor/compile_fx.py``
(``fx_codegen_and_compile``), torch 2.11 and 2.13.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CodegenOnly", "GraphCost", "code_temporaries", "codegen_only", "codegen_skipped",
           "graph_cost", "inductor_cost", "leaner_in_kind", "total"]


@dataclass(frozen=True)
class GraphCost:
    """One lowered graph: ``bytes`` moved per call by the loop-extent accounting (int,
    bytes), ``kernels`` (its scheduler nodes that move memory: fused kernels and extern
    calls), ``nodes`` (``(scheduler node name, bytes)`` in schedule order),
    ``inductor_bytes`` (Inductor's ``count_bytes``, reference only), ``temporaries``
    (``(buffer name, bytes)`` of non-output, non-mutation buffers the code allocates) and
    ``code_temporaries`` (the same read from the generated code, :func:`code_temporaries`;
    None when the code was not written or cannot be read)."""

    bytes: int
    kernels: int
    nodes: tuple[tuple[str, int], ...] = field(default=())
    inductor_bytes: int = 0
    temporaries: tuple[tuple[str, int], ...] = field(default=())
    measured: bool = True  # False: the accounting raised on this graph (its bytes are 0 here)
    code_temporaries: tuple[tuple[str, int], ...] | None = None

    def to_json(self) -> dict:
        code = None if self.code_temporaries is None else [list(t) for t in self.code_temporaries]
        return {"bytes": self.bytes, "kernels": self.kernels, "nodes": [list(n) for n in self.nodes],
                "inductor_bytes": self.inductor_bytes,
                "temporaries": [list(t) for t in self.temporaries], "measured": self.measured,
                "code_temporaries": code}


def leaner_in_kind(bytes_: tuple[int, int], temporary_bytes: tuple[int, int]) -> str | None:
    """How the second of two generated codes is leaner than the first in kind, not by a
    few bytes of accounting: ``"temporary_bytes"`` when it allocates fewer temporary bytes,
    ``"bytes"`` when it moves at most half the bytes, None otherwise. ``bytes_`` and
    ``temporary_bytes`` are (first, second) per call. A few bytes of difference with the
    same allocations is a counting artifact (seventeenth audit: 8c9f0d424d, a kept scatter
    fused into its consumer; aebacc9733, a witness compiling to the same kernels)."""
    if temporary_bytes[1] < temporary_bytes[0]:
        return "temporary_bytes"
    return "bytes" if bytes_[0] >= 2 * bytes_[1] else None


def total(graphs: list[GraphCost]) -> dict[str, int]:
    """``{"bytes", "inductor_bytes", "kernels", "temporaries", "temporary_bytes",
    "code_temporary_bytes", "unmeasured"}`` summed over ``graphs`` (``unmeasured``: graphs
    whose accounting raised; their bytes are missing, so a comparison of two totals with one
    is meaningless; ``code_temporary_bytes`` is -1 when a graph's code could not be read)."""
    code = [g.code_temporaries for g in graphs]
    return {
        "code_temporary_bytes": (-1 if any(c is None for c in code)
                                 else sum(b for c in code for _, b in c)),
        "bytes": sum(g.bytes for g in graphs),
        "inductor_bytes": sum(g.inductor_bytes for g in graphs),
        "kernels": sum(g.kernels for g in graphs),
        "temporaries": sum(len(g.temporaries) for g in graphs),
        "temporary_bytes": sum(b for g in graphs for _, b in g.temporaries),
        "unmeasured": sum(1 for g in graphs if not g.measured),
    }


def _hint(expr: Any) -> int:
    from torch._inductor.virtualized import V

    return int(V.graph.sizevars.optimization_hint(expr, fallback=0))


def _dep_elements(dep: Any) -> int:
    """Elements a ``MemoryDep``'s index reaches over its loop extents (upper bound)."""
    extents = dict(zip(dep.var_names, dep.size, strict=False))
    used = dep.index.free_symbols
    if any(s not in extents for s in used):  # indirect (a loaded index) or unbacked: every iteration
        return math.prod(_hint(s) for s in dep.size)
    return math.prod(_hint(extents[s]) for s in used)


def _storage_numel(name: str) -> int:
    """Elements of the memory buffer ``name`` lives in: a buffer that mutates another in
    place (``get_mutation_names``: a scatter the reinplace pass wrote into its base, sized
    by its update) is that base, so a later kernel's read through it is capped at the
    base's size, not the update's (tenth audit 8c9f0d424d: ``x[2] = 0.5; x.add_(1)``
    forced in place was charged 24 bytes, its read of ``x`` capped at one element, and the
    fused default's 32 bytes looked like 8 bytes of waste; the real code moves 36)."""
    from torch._inductor.virtualized import V

    numel = _hint(V.graph.get_numel(name))
    sched = getattr(V.graph, "scheduler", None)
    sb = sched.name_to_buf.get(name) if sched is not None else None
    for target in (sb.node.get_mutation_names() if sb is not None else ()):
        if target != name:
            numel = max(numel, _storage_numel(target))
    return numel


def _buffer_bytes(name: str, elements: int) -> int:
    from torch._inductor.virtualized import V

    return min(elements, _storage_numel(name)) * V.graph.get_dtype(name).itemsize


def _kernel_bytes(graph: Any, node: Any) -> int:
    """Bytes one scheduler node (kernel, fusion or extern call) moves per call."""
    from torch._inductor import dependencies as deps
    from torch._inductor.scheduler import FusedSchedulerNode, SchedulerNode

    subs = node.snodes if isinstance(node, FusedSchedulerNode) else [node]
    if not all(isinstance(s, SchedulerNode) for s in subs):
        return _extern_bytes(graph, node)
    names = {s.get_name() for s in subs}
    sched = graph.scheduler

    def internal(buf: str) -> bool:  # written and read only inside this node
        sb = sched.name_to_buf.get(buf)
        return sb is not None and all(getattr(u.node, "get_name", lambda: None)() in names for u in sb.users)

    written = {d.name for s in subs for d in s.read_writes.writes}
    skip = {b for b in written if internal(b)}
    moved = 0
    for kind in ("reads", "writes"):
        per: dict[str, dict[tuple, int]] = {}
        for s in subs:
            for d in getattr(s.read_writes, kind):
                if isinstance(d, deps.MemoryDep) and d.name not in skip:
                    per.setdefault(d.name, {})[(d.index, tuple(d.size))] = _dep_elements(d)
        moved += sum(_buffer_bytes(name, sum(ds.values())) for name, ds in per.items())
    return moved


def _extern_bytes(graph: Any, node: Any) -> int:
    """Bytes an extern call (a fallback op, a template) moves per call: Inductor's own
    ``get_read_write_buffer_accesses`` (each buffer it reads or writes, whole, once), with
    two of its answers replaced, because they depend on what surrounds the call rather than
    on the call (audit 42, 2e5d53d047: one ``index_reduce_`` fallback charged 1168 bytes
    after a graph break and 2192 without one, for the same code):

    * a ``MultiOutputLayout`` output (the fallback's tuple) is the bytes of its
      ``MultiOutput`` children; Inductor gives 0 as soon as any other node orders itself
      after the tuple (a ``WeakDep`` of a later kernel), the children otherwise;
    * a buffer the call only names through a ``WeakDep`` (an ordering edge) is not moved.
    """
    from torch._inductor import dependencies as deps
    from torch._inductor import ir
    from torch._inductor.virtualized import V

    accesses = dict(node.get_read_write_buffer_accesses(include_reads=True, include_writes=True))
    if not accesses:  # a MultiOutput, a no-op: Inductor moves nothing there
        return 0
    rw = node.read_writes
    moved = {d.name for d in rw.writes} | {d.name for d in rw.reads if not isinstance(d, deps.WeakDep)}
    sched = graph.scheduler
    for name in list(accesses):
        if name not in moved:
            del accesses[name]
            continue
        buf = V.graph.name_to_buffer.get(name)
        if buf is not None and isinstance(getattr(buf, "layout", None), ir.MultiOutputLayout):
            accesses[name] = sum(
                _hint(out.node.get_numel()) * out.node.get_dtype().itemsize
                for user in sched.name_to_buf[name].users
                if isinstance(getattr(user.node, "node", None), ir.MultiOutput)
                for out in user.node.get_outputs())
    return int(sum(accesses.values()))


def _temporaries(graph: Any) -> tuple[tuple[str, int], ...]:
    from torch._inductor import ir

    outputs = set(graph.get_output_names())
    gone = set(graph.removed_buffers) | set(graph.inplaced_to_remove)
    out = []
    for node in graph.scheduler.nodes:
        for sb in node.get_outputs():
            buf = sb.node
            name = buf.get_name()
            layout = getattr(buf, "layout", None)
            if name in outputs or name in gone or buf.get_mutation_names():
                continue
            if not isinstance(layout, ir.Layout) or isinstance(layout, ir.NoneLayout | ir.MultiOutputLayout):
                continue
            out.append((name, _hint(buf.get_numel()) * buf.get_dtype().itemsize))
    return tuple(out)


def graph_cost(graph: Any) -> GraphCost:
    """The :class:`GraphCost` of a ``GraphLowering`` whose scheduler is built (after
    ``compile_to_module``). Raises whatever Inductor's internals raise on a graph they do
    not cover (the caller skips such a graph)."""
    from torch._inductor.virtualized import V

    with V.set_graph_handler(graph):
        nodes = tuple((n.get_name(), _kernel_bytes(graph, n)) for n in graph.scheduler.nodes)
        counted = graph.count_bytes()[0]
        temps = _temporaries(graph)
    code = None
    if getattr(graph, "cache_path", ""):  # set once compile_to_module wrote the module
        try:
            with open(graph.cache_path, encoding="utf-8") as fh:
                code = code_temporaries(fh.read())
        except OSError:
            code = None
    return GraphCost(sum(b for _, b in nodes), sum(1 for _, b in nodes if b > 0), nodes,
                     int(counted), temps, code_temporaries=code)


def code_temporaries(source: str) -> tuple[tuple[str, int], ...] | None:
    """``(buffer name, bytes)`` of each buffer the ``call`` function of Inductor's generated
    Python wrapper (``source``: the module's text) allocates with ``empty_strided_<device>``
    and returns neither itself nor through an alias (``reinterpret_tensor(bufN, ...)``, a
    ``bufM = bufN`` reuse): the temporaries as an engineer reads them in the output code.
    A symbolic size (dynamic shapes: ``s77 = arg0_1`` in ``call``) takes the value the
    module's own ``get_args`` gives that argument (Inductor's benchmark harness, the size
    the graph was compiled for). None when there is no ``call`` or a size cannot be read.
    Written without this package's imports, so that a repro can carry its source
    (:func:`aliasfuzz.campaign.repro.witness_repro`). Mirrors the wrapper lines of
    ``torch/_inductor/codegen/wrapper.py`` (``make_buffer_allocation``, ``get_args``),
    torch 2.11-2.13."""
    import re

    import torch

    lines = source.splitlines()

    def block(head: str) -> list[str]:
        start = next((i for i, ln in enumerate(lines) if re.match(rf"\s*def {head}\(", ln)), None)
        if start is None:
            return []
        indent = len(lines[start]) - len(lines[start].lstrip())
        out = []
        for ln in lines[start + 1:]:
            if ln.strip() and len(ln) - len(ln.lstrip()) <= indent:
                break
            out.append(ln)
        return out

    body = block("call")
    if not body:
        return None
    given = dict(re.findall(r"^\s*(arg\d+_1) = (\d+)\s*$", "\n".join(block("get_args")), re.M))
    symbols = {s: given[a] for s, a in re.findall(r"^\s*([a-z]\d+) = (arg\d+_1)\s*$",
                                                     "\n".join(body), re.M) if a in given}

    def size(dim: str) -> int | None:
        expr = re.sub(r"\b[a-z]\d+\b", lambda m: symbols.get(m.group(0), "?"), dim)
        if not re.fullmatch(r"[\d\s*+\-()/%]+", expr):
            return None
        try:
            return int(eval(expr, {"__builtins__": {}}))  # digits and operators only
        except (SyntaxError, ZeroDivisionError, TypeError, ValueError):
            return None

    alloc = re.compile(r"^\s*(buf\d+) = empty_strided_\w+\(\((.*?)\), \(.*?\), torch\.(\w+)\)")
    sizes: dict[str, int] = {}
    alias: dict[str, set[str]] = {}
    returned: set[str] = set()
    for ln in body:
        m = alloc.match(ln)
        if m:
            numel = 1
            for d in (d.strip() for d in m.group(2).split(",")):
                n = size(d) if d else 1
                if n is None:
                    return None
                numel *= n
            sizes[m.group(1)] = numel * getattr(torch, m.group(3)).itemsize
            continue
        if ln.strip().startswith("return"):
            returned |= set(re.findall(r"\bbuf\d+\b", ln))
            continue
        # a reuse (bufM = bufN) or a view (reinterpret_tensor): one storage; an op's result
        # (bufM = torch.ops...(bufN)) is another
        a = re.match(r"^\s*(buf\d+) = (?:reinterpret_tensor\()?(buf\d+)\b", ln)
        if a:
            alias.setdefault(a.group(1), set()).add(a.group(2))
    out = set(returned)
    grew = True
    while grew:
        grew = False
        for name, srcs in alias.items():
            if name in out and not srcs <= out:
                out |= srcs
                grew = True
    return tuple((n, b) for n, b in sizes.items() if n not in out)


@contextmanager
def inductor_cost() -> Iterator[list[GraphCost]]:
    """Within the block, each graph Inductor lowers appends its :class:`GraphCost` to the
    yielded list (graphs in compile order; a graph whose accounting raises appends an empty
    cost with ``measured=False``: the accounting reads PyTorch's internals, and a failure
    of it says nothing about the program, but its bytes are missing from any sum).

    Nests with itself (the inner list sees only its own graphs; the outer sees all)."""
    from torch._inductor.graph import GraphLowering

    seen: list[GraphCost] = []
    original = GraphLowering.compile_to_module

    def record(graph: Any) -> None:
        try:
            seen.append(graph_cost(graph))
        except Exception:  # noqa: BLE001 - see the docstring: not the program's failure
            seen.append(GraphCost(0, 0, measured=False))

    def compile_to_module(self, *args, **kwargs):
        try:
            mod = original(self, *args, **kwargs)
        except CodegenOnly:  # the code is generated, the scheduler final: count it
            record(self)
            raise
        if getattr(self, "scheduler", None) is None:
            return mod
        record(self)
        return mod

    GraphLowering.compile_to_module = compile_to_module
    try:
        yield seen
    finally:
        GraphLowering.compile_to_module = original


class CodegenOnly(Exception):
    """Raised by Inductor's ``GraphLowering`` under :func:`codegen_only` once a graph's code
    is generated, in place of building and loading its module."""


@contextmanager
def codegen_only() -> Iterator[None]:
    """Within the block, Inductor lowers each graph and generates its code (the scheduler,
    fusion and the buffers codegen removes, all that :func:`graph_cost` reads, are final by
    then) but neither builds nor loads the module: ``GraphLowering._compile_to_module_lines``
    (which writes the wrapper and loads it, compiling its C++ or Triton kernels) raises
    :class:`CodegenOnly` instead. On the 2-core CPU box that build is about 85 % of a small
    graph's compile (1.1 of 1.3 s). :func:`inductor_cost` still records the graph's cost;
    the ``inductor`` pipeline's inner compile (:mod:`aliasfuzz.passes.pipelines`) then runs
    the graph it was handed (AOTAutograd's, before the post-grad passes) eagerly, so that
    Dynamo carries on to the program's next graph. The values such a run computes are not
    the compiled code's: only the costs mean anything.

    Mirrors ``torch/_inductor/graph.py`` ``GraphLowering._compile_to_module`` (torch 2.11
    and 2.13: ``codegen()``, then ``_compile_to_module_lines(wrapper_code)``); on a torch
    without that method the block compiles in full (:func:`codegen_skipped` stays False).
    Not thread-safe (it patches a class attribute), like :func:`inductor_cost`.
    """
    from torch._inductor.graph import GraphLowering

    original = getattr(GraphLowering, "_compile_to_module_lines", None)
    if original is None:
        yield
        return

    def stop(self, *args, **kwargs):
        raise CodegenOnly(f"codegen only: {len(self.scheduler.nodes)} scheduler nodes")

    GraphLowering._compile_to_module_lines = stop
    _CODEGEN_ONLY.append(True)
    try:
        yield
    finally:
        _CODEGEN_ONLY.pop()
        GraphLowering._compile_to_module_lines = original


_CODEGEN_ONLY: list[bool] = []


def codegen_skipped(error: BaseException | None = None) -> bool:
    """With no argument: whether a :func:`codegen_only` block is active. With ``error``:
    whether it is :class:`CodegenOnly`, directly or wrapped (Inductor re-raises a compile's
    exception as ``InductorError`` with ``inner_exception``; Python chains ``__cause__``)."""
    if error is None:
        return bool(_CODEGEN_ONLY)
    seen = 0
    while error is not None and seen < 8:
        if isinstance(error, CodegenOnly):
            return True
        error = getattr(error, "inner_exception", None) or error.__cause__ or error.__context__
        seen += 1
    return False
