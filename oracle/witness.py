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
* ``graph-split``: a ``torch._dynamo.graph_break()`` right after a statement that writes
  into an input (an in-place op, an ``out=`` op, a store), when later statements read it.
  A graph break changes where Dynamo cuts the program into graphs, never what Python
  computes, so every value is kept by construction. Each graph's input mutation is then
  written straight into the input, where one graph may compute the value into a
  temporary of its own and copy it into the input and every later reader (shared case c06,
  PyTorch #195330: ``torch.mul(field[rows], 0.5, out=work); field[rows] = work``). Tried
  for a program whose compiled code allocates a temporary (:func:`gate`), after each such
  statement in turn (at most :data:`SPLITS`).

The excess must grow for one of the input sizes: each distinct dimension size, largest
first, is doubled in turn (:func:`scaled`); an excess that follows a workspace or an update
rather than the largest tensor (c06: the (3, 4) workspace of a (16, 4) field) grows with
the dimension it follows, and a constant one grows with none.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx

__all__ = ["RULES", "SCALING", "SIZES", "SPLITS", "Witness", "find_witness", "gate", "scaled",
           "witness_bytes", "witness_temporaries"]

#: Least growth of the excess when the inputs double along one dimension size.
SCALING = 1.8

#: Most graph-split positions tried per program (each costs two to four compiles).
SPLITS = 2

#: Most dimension sizes doubled in turn for the growth check, largest first.
SIZES = 3

_INPLACE_OPERATORS = {operator.iadd: "add_", operator.isub: "sub_", operator.imul: "mul_",
                      operator.itruediv: "div_"}


@dataclass(frozen=True)
class Witness:
    """A confirmed witness: ``rule``, the ``original`` and ``spelled`` source lines, bytes
    per call of the original and the witness at the program's sizes (``bytes``) and with
    the inputs doubled along one dimension size (``scaled_bytes``), and ``sizes`` (that
    size before, after); ``inductor_bytes``: the same pair at the program's sizes by
    Inductor's own count (``GraphLowering.count_bytes``, what ``torch._inductor.metrics.
    num_bytes_accessed`` sums and the finding's repro compares), which must agree that the
    original moves more; ``temporary_bytes``: bytes of temporaries each allocates (the
    witness must allocate fewer, or move at most half the bytes: :func:`_leaner`);
    ``lean``: which of the two makes it leaner (``"temporary_bytes"`` or ``"bytes"``), and so
    what the repro compares: the temporaries the generated ``call`` allocates
    (:func:`aliasfuzz.passes.cost.code_temporaries`), or Inductor's count."""

    rule: str
    original: str
    spelled: str
    bytes: tuple[int, int]
    scaled_bytes: tuple[int, int]
    sizes: tuple[int, int]
    inductor_bytes: tuple[int, int] = (0, 0)
    temporary_bytes: tuple[int, int] = (0, 0)
    lean: str = "bytes"

    @property
    def excess(self) -> int:
        return self.bytes[0] - self.bytes[1]

    def message(self, needed: int | None) -> str:
        bound = ""
        if needed:
            bound = f" (needed {needed}: compiled/needed {self.bytes[0] / needed:.1f}x)"
        scaled_excess = self.scaled_bytes[0] - self.scaled_bytes[1]
        extents = (f"by the kernels' loop extents {self.bytes[0]} vs {self.bytes[1]}{bound}, "
                   f"loop-extent excess {self.excess} bytes, {scaled_excess} "
                   f"({scaled_excess / self.excess:.2f}x) with every input dimension of size "
                   f"{self.sizes[0]} doubled to {self.sizes[1]}")
        said = f"witness {self.rule}: `{self.original}` spelled `{self.spelled}` gives eager's values; "
        if self.lean == "temporary_bytes":
            # audit 56 (eaede8e418): Inductor's count charged a buffer read through an index
            # whole (800 vs 544 bytes) where the kernels moved 288 vs 240; the claim is the
            # temporary, which the repro reads in the generated code
            return (said + f"Inductor's code allocates {self.temporary_bytes[0]} bytes of "
                    f"temporaries per call, the witness {self.temporary_bytes[1]} (the figure the "
                    f"repro compares: buffers the generated call allocates and does not return); "
                    f"{extents}; Inductor's own count {self.inductor_bytes[0]} vs "
                    f"{self.inductor_bytes[1]} bytes per call (torch._inductor.metrics."
                    f"num_bytes_accessed, for reference)")
        # the repro's figure first (audit 36: the auditor met the loop-extent count in the
        # explanation and another one in the repro, and read them as a contradiction)
        # each excess names its count (audit 38: "excess 8 bytes" beside the repro's 12)
        return (said + f"Inductor's code moves {self.inductor_bytes[0]} bytes per call by "
                f"Inductor's own count (the figure the repro compares), the witness "
                f"{self.inductor_bytes[1]} (excess "
                f"{self.inductor_bytes[0] - self.inductor_bytes[1]} bytes); temporaries "
                f"{self.temporary_bytes[0]} vs {self.temporary_bytes[1]} bytes; {extents}")


#: The two figures of :meth:`Witness.message` by Inductor's own count (either wording).
_INDUCTOR_BYTES = re.compile(r"Inductor's code moves (\d+) bytes per call by Inductor's own "
                             r"count \(the figure the repro compares\), the witness (\d+)"
                             r"|Inductor's own count (\d+) vs (\d+) bytes per call")

#: The temporaries' figures of :meth:`Witness.message` when they are what the repro compares.
_TEMPORARY_BYTES = re.compile(r"Inductor's code allocates (\d+) bytes of temporaries per call, "
                              r"the witness (\d+) \(the figure the repro compares")


def witness_bytes(explanation: str) -> tuple[int, int] | None:
    """``(original, witness)``: the bytes per call Inductor's own count gives the original
    program's code and the witness's, as a finding's explanation says them
    (:meth:`Witness.message`); None when it says no witness."""
    m = _INDUCTOR_BYTES.search(explanation or "")
    if m is None:
        return None
    a, b = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    return int(a), int(b)


def witness_temporaries(explanation: str) -> tuple[int, int] | None:
    """``(original, witness)``: the temporary bytes per call the generated code of each
    allocates, when the explanation says they are what the repro compares
    (:meth:`Witness.message` of a witness leaner by its temporaries); None otherwise."""
    m = _TEMPORARY_BYTES.search(explanation or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


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


def _root(a: Any, inputs: set[torch.fx.Node]) -> torch.fx.Node | None:
    """The placeholder ``a`` is, or is a view of (None: neither)."""
    while isinstance(a, torch.fx.Node) and a not in inputs:
        if (a.op == "call_method" and a.target in _VIEW_METHODS or a.target is operator.getitem
                or a.target in _INPLACE_OPERATORS or _inplace_name(a)):
            a = a.args[0] if a.args else None  # an in-place op returns its (viewed) input
        else:
            return None
    return a if isinstance(a, torch.fx.Node) else None


def _inplace_name(n: torch.fx.Node) -> bool:
    name = n.target if isinstance(n.target, str) else getattr(n.target, "__name__", "")
    return name.endswith("_") and not name.startswith("_")


def _written_input(n: torch.fx.Node, inputs: set[torch.fx.Node]) -> torch.fx.Node | None:
    """The placeholder Dynamo node ``n`` writes into (itself or through a view): an
    in-place method or operator, a ``setitem``, or a call with an ``out=`` tensor."""
    if n.op not in ("call_function", "call_method"):
        return None
    out = n.kwargs.get("out")
    if isinstance(out, torch.fx.Node):
        return _root(out, inputs)
    mutating = n.target is operator.setitem or n.target in _INPLACE_OPERATORS or _inplace_name(n)
    return _root(n.args[0], inputs) if mutating and n.args else None


_VIEW_METHODS = {"view", "reshape", "transpose", "t", "permute", "select", "narrow",
                 "unsqueeze", "squeeze", "expand", "as_strided", "diagonal", "unfold",
                 "flatten", "unflatten", "view_as", "movedim", "__getitem__"}


def _split_points(gm: torch.fx.GraphModule) -> list[torch.fx.Node]:
    """Nodes after which a graph break may save a temporary: each writes into an input that
    a later statement reads (the read functionalization turns into a read of the written
    value, which Inductor then keeps in a buffer of its own). Only the last node of a
    source line counts (``x[s] += c`` is three nodes of one statement)."""
    inputs = {n for n in gm.graph.nodes if n.op == "placeholder"}
    nodes = [n for n in gm.graph.nodes if n.op != "output"]
    points = []
    for k, n in enumerate(nodes[:-1]):
        written = _written_input(n, inputs)
        if written is None:
            continue
        line = _source_line(n)
        if line and _source_line(nodes[k + 1]) == line:
            continue  # not the statement's last node
        later = [r for r in nodes[k + 1:] if not line or _source_line(r) != line]
        if any(_root(a, inputs) is written for r in later for a in r.all_input_nodes):
            points.append(n)
    return points


def _graph_split(gm: torch.fx.GraphModule, at: int) -> list[tuple[str, str]]:
    """Insert ``torch._dynamo.graph_break()`` after the ``at``-th split point (see the
    module doc); [] when there is no such point."""
    points = _split_points(gm)
    if at >= len(points):
        return []
    n = points[at]
    with gm.graph.inserting_after(n):
        gm.graph.call_function(torch._dynamo.graph_break, ())
    line = re.sub(r"^def [^:]*:\s*", "", _source_line(n)) or n.format_node()
    return [(line, f"{line}; torch._dynamo.graph_break()")]


def gate(cost: dict[str, Any] | None, rule: str, ratio_gate: float) -> bool:
    """Whether ``rule`` is worth its compiles for a program whose full ``inductor`` run cost
    ``cost`` (``{"ratio", "temporaries", ...}`` of :func:`aliasfuzz.oracle.judge._cost`):
    ``graph-split`` needs an allocated temporary and more bytes than the program needs
    (what it can save is a temporary); the other rules need the ratio ``ratio_gate``."""
    if not cost or cost.get("ratio") is None:
        return False
    if rule == "graph-split":
        return cost.get("temporaries", 0) > 0 and cost["ratio"] > 1.0
    return cost["ratio"] >= ratio_gate


def _split_rule(at: int) -> Callable[[torch.fx.GraphModule], list[tuple[str, str]]]:
    return lambda gm: _graph_split(gm, at)


#: (rule name, rewrite of a Dynamo graph in place returning ``[(original line, witness
#: line)]``, empty when the rule does not apply); a rule may appear once per position.
RULES: list[tuple[str, Callable[[torch.fx.GraphModule], list[tuple[str, str]]]]] = [
    ("augmented-setitem", _augmented_setitem),
    *[("graph-split", _split_rule(k)) for k in range(SPLITS)],
]


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


def _sizes(inputs: Sequence[Any]) -> list[int]:
    """The distinct dimension sizes above 1 of the tensor inputs, largest first."""
    return sorted({d for t in inputs if isinstance(t, torch.Tensor) for d in t.shape if d > 1},
                  reverse=True)


def scaled(inputs: Sequence[Any], size: int | None = None) -> tuple[Any, ...]:
    """``inputs`` with every tensor dimension of ``size`` (default: the largest size)
    doubled (the tensor repeated along it; contiguous copies). Integer tensors keep their
    values (indices), so a repeated index tensor repeats its indices."""
    top = _max_dim(inputs) if size is None else size
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
    use: Callable[[str], bool] = lambda rule: True, base: dict[str, int] | None = None,
    screen: Callable[[Callable, tuple], dict[str, int] | None] | None = None,
) -> Witness | None:
    """The first rule of :data:`RULES` whose spelling of ``fn`` is a witness (module doc).

    ``compile_run(f, inputs)`` runs ``f`` through the full ``inductor`` pipeline and returns
    its Execution (with ``cost``); ``same(f, inputs, execution)`` says whether the run gives
    eager's results for ``f`` on ``inputs``; ``use(rule)`` says whether a rule is tried
    (:func:`gate`); ``base``: the bytes ``fn``'s own ``inductor`` run on ``make()`` moved
    (:func:`aliasfuzz.passes.cost.total` of its run), when the caller has it (one compile
    fewer per rule tried). A spelling is a witness only when it is leaner at the program's
    sizes (:func:`_leaner`: both accountings say the original moves more, and the witness
    allocates fewer temporary bytes or moves at most half the bytes; the repro shows
    Inductor's count: an excess only the loop-extent accounting sees would be a finding
    whose repro says fixed), leaner the same way at a doubled size, and its excess (bytes
    moved, and the temporaries saved when that is how it is leaner) grows :data:`SCALING`
    times there.

    ``screen(f, inputs)``, when given, is the totals of ``f``'s ``inductor`` compile with
    the code generated but not built (:func:`aliasfuzz.passes.cost.codegen_only`; None
    when they cannot be read): the bytes the full compile would count, at about a sixth of
    its time on CPU. A size whose screened bytes already fail the test above is skipped
    without a full compile; one that passes it (or cannot be screened) is measured in full,
    so the witnesses found are the same with or without ``screen`` (unit test
    ``test_screen_finds_the_same_witnesses``)."""
    from aliasfuzz.passes.cost import total

    rules = [(r, w) for r, w in RULES if use(r)]
    got = _capture(fn, names, make()) if rules else None
    if got is None:
        return None
    gm, order = got
    # the original's totals per doubled size (None: the program's own inputs), compiled once
    # for every rule that gets there
    originals: dict[int | None, dict[str, int] | None] = {} if base is None else {None: base}

    def original(size: int | None) -> dict[str, int] | None:
        if size not in originals:
            run = compile_run(fn, make() if size is None else scaled(make(), size))
            a = total(run.cost) if run.ok and run.cost else None
            originals[size] = None if a is None or a["unmeasured"] else a
        return originals[size]

    # the same for the screen: the original's screened totals per doubled size
    screened_originals: dict[int | None, dict[str, int] | None] = {} if base is None else {None: base}

    def screened_original(size: int | None) -> dict[str, int] | None:
        if size not in screened_originals:
            screened_originals[size] = screen(fn, make() if size is None else scaled(make(), size))
        return screened_originals[size]

    def fails(f: Callable, size: int | None, test: Callable[[dict, dict], bool]) -> bool:
        """Whether the screen shows ``f``'s bytes at ``size`` fail ``test(original, f)``
        (False when there is no screen or a total cannot be read: measure in full)."""
        if screen is None:
            return False
        b = screen(f, make() if size is None else scaled(make(), size))
        a = screened_original(size)
        if a is None or b is None or a.get("unmeasured") or b.get("unmeasured"):
            return False
        if min(a.get("code_temporary_bytes", -1), b.get("code_temporary_bytes", -1)) < 0:
            # no code was written: the full compile may find the temporaries the code
            # shows and the accounting's differ (:func:`_leaner`), so fail only when both
            # readings fail
            flat = {"temporary_bytes": 0}
            return not test(a, b) and not test({**a, **flat}, {**b, **flat})
        return not test(a, b)

    def grows(a0: dict, w0: dict, a1: dict, w1: dict, lean: str) -> bool:
        return all(a1[k] - w1[k] >= SCALING * (a0[k] - w0[k]) for k in {lean, "bytes"})

    for rule, rewrite in rules:
        copy = torch.fx.GraphModule(gm, _copy_graph(gm.graph))
        lines = rewrite(copy)
        if not lines:
            continue
        copy.recompile()

        def spelled(*ins, _gm=copy, _order=tuple(order)):
            return _gm(*[ins[i] for i in _order])

        def measure(size: int | None) -> tuple[dict[str, int], dict[str, int]] | None:
            def inputs() -> tuple:
                return make() if size is None else scaled(make(), size)

            wit = compile_run(spelled, inputs())
            if not (wit.ok and wit.cost and same(fn, inputs(), wit)):
                return None
            b = total(wit.cost)
            a = original(size)
            if b["unmeasured"] or a is None:  # a graph's bytes are missing: no comparison
                return None
            return a, b

        if fails(spelled, None, lambda a, b: _leaner(a, b) is not None):
            continue
        first = measure(None)
        lean = _leaner(*first, full=True) if first is not None else None
        if lean is None:
            continue
        a0, w0 = first
        for size in _sizes(make())[:SIZES]:
            if fails(spelled, size, lambda a, b, lean=lean, a0=a0, w0=w0:
                     _leaner(a, b) == lean and grows(a0, w0, a, b, lean)):
                continue
            big = measure(size)
            if big is None or _leaner(*big, full=True) != lean:
                continue
            a1, w1 = big
            # the excess in bytes moved grows, and so does what makes the witness leaner
            if grows(a0, w0, a1, w1, lean):
                return Witness(rule, lines[0][0], lines[0][1], (a0["bytes"], w0["bytes"]),
                               (a1["bytes"], w1["bytes"]), (size, 2 * size),
                               (a0["inductor_bytes"], w0["inductor_bytes"]),
                               (a0["temporary_bytes"], w0["temporary_bytes"]), lean)
    return None


def _leaner(a: dict[str, int], w: dict[str, int], full: bool = False) -> str | None:
    """How the witness's code (totals ``w``) is leaner than the original's (``a``): the key
    of :func:`aliasfuzz.passes.cost.leaner_in_kind`, or None. Both accountings must also say
    it moves fewer bytes (loop-extent, and Inductor's own count, which the repro shows).
    The repro reads the temporaries in the generated code, so a saving in them counts only
    where the code shows it; code that could not be read (-1: a size the wrapper's text
    cannot give) shows nothing for two ``full`` compiles, and leaves the screen (compiles
    that write no code) to the full compile."""
    from aliasfuzz.passes.cost import leaner_in_kind

    if w["bytes"] >= a["bytes"] or w["inductor_bytes"] >= a["inductor_bytes"]:
        return None
    kind = leaner_in_kind((a["bytes"], w["bytes"]), (a["temporary_bytes"], w["temporary_bytes"]))
    code = (a.get("code_temporary_bytes", -1), w.get("code_temporary_bytes", -1))
    unread = min(code) < 0
    if kind == "temporary_bytes" and (full if unread else code[1] >= code[0]):
        return leaner_in_kind((a["bytes"], w["bytes"]), (0, 0))
    return kind


def _copy_graph(graph: torch.fx.Graph) -> torch.fx.Graph:
    new = torch.fx.Graph()
    out = new.graph_copy(graph, {})
    new.output(out)
    for a, b in zip(graph.nodes, new.nodes, strict=False):
        b.meta = dict(a.meta)
    return new
