"""Tracing a program to the functional graphs the passes see, with source lines on nodes.

* :func:`trace_aot` stops AOTAutograd right before its forward compiler and returns the
  inference graph Inductor's post-grad passes receive (``keep_inference_input_mutations``,
  Inductor's decomposition table, ``copy_`` epilogue, ``auto_functionalized_v2`` ...).
* :func:`trace_functional` is ``make_fx(functionalize(f))``, the input of
  ``torch.fx.passes.reinplace``.
* Outside Dynamo no node gets a ``stack_trace`` (``make_fx`` keeps only frames named
  ``forward``), so :func:`with_line_marks` recompiles the program function with a call
  before every statement that publishes its line through
  ``torch.fx.traceback.set_stack_trace``; nodes created while that statement runs carry
  ``File "<program file>", line N``, exactly as Dynamo writes it.
* :func:`node_line` reads a node's source line in a given file back from its stack trace.
"""

from __future__ import annotations

import ast
import copy
import inspect
import re
import textwrap
from collections.abc import Callable
from typing import Any

import torch
import torch.fx

from aliasfuzz.passes.hygiene import resolve

__all__ = ["copy_graph_module", "node_line", "trace_aot", "trace_functional", "with_line_marks"]

_MARK = "__aliasfuzz_line__"
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


class _Stop(Exception):
    """Raised by the capturing forward compiler to stop AOTAutograd before it executes."""


def _publish_line(filename: str, lineno: int, name: str) -> None:
    set_stack_trace = resolve("torch.fx.traceback", "set_stack_trace")
    set_stack_trace([f'  File "{filename}", line {lineno}, in {name}\n'])


class _Marker(ast.NodeTransformer):
    """Insert ``__aliasfuzz_line__(lineno)`` before every statement of every block."""

    def _mark_block(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in body:
            self.visit(stmt)
            call = ast.Expr(ast.Call(ast.Name(_MARK, ast.Load()), [ast.Constant(stmt.lineno)], []))
            out += [ast.copy_location(call, stmt), stmt]
        return out

    def generic_visit(self, node):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, field, self._mark_block(block))
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.stmt):
                super().generic_visit(child)
        return node


def with_line_marks(fn: Callable) -> Callable:
    """A copy of ``fn`` that publishes each statement's line to FX's node-meta tracking.

    Same globals, same file name and line numbers (so tracebacks stay true). Falls back
    to ``fn`` itself when its source is unavailable or it is a closure; its nodes then
    have no line. Only meaningful inside ``torch.fx.traceback.preserve_node_meta()``.
    """
    code = getattr(fn, "__code__", None)
    if code is None or code.co_freevars:
        return fn
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return fn
    tree = ast.parse(source)
    ast.increment_lineno(tree, code.co_firstlineno - 1)
    func = tree.body[0]
    if not isinstance(func, ast.FunctionDef):
        return fn
    func.decorator_list = []
    _Marker().visit(func)
    ast.fix_missing_locations(tree)
    namespace: dict[str, Any] = {}
    filename, name = code.co_filename, code.co_name
    glb = dict(fn.__globals__)
    glb[_MARK] = lambda lineno: _publish_line(filename, lineno, name)
    exec(compile(tree, filename, "exec"), glb, namespace)  # noqa: S102 - the program's own source
    marked = namespace[func.name]
    marked.__defaults__ = fn.__defaults__
    return marked


def node_line(node: torch.fx.Node, filename: str | None) -> int | None:
    """The line of ``filename`` in ``node``'s stack trace (innermost frame), or None."""
    trace = node.meta.get("stack_trace") or ""
    line = None
    for m in _FRAME.finditer(trace):
        if filename is None or m.group(1) == filename:
            line = int(m.group(2))
    return line


def copy_graph_module(gm: torch.fx.GraphModule, node_attrs: bool = False) -> torch.fx.GraphModule:
    """A structural copy of ``gm`` whose nodes hold shallow copies of the originals' meta.

    FakeTensors in ``meta["val"]`` are shared, not copied; a pass that later rewrites the
    original graph or reassigns its nodes' meta entries leaves the copy as it was. With
    ``node_attrs``, attributes set on the nodes themselves (Dynamo's ``_dynamo_source`` on
    a placeholder) are carried over too.
    """
    graph = torch.fx.Graph()
    val_map: dict[torch.fx.Node, torch.fx.Node] = {}
    out = graph.graph_copy(gm.graph, val_map)
    graph.output(out)
    for old, new in val_map.items():
        new.meta = copy.copy(old.meta)
        if node_attrs:
            for key, value in old.__dict__.items():
                if key not in new.__dict__:
                    new.__dict__[key] = value
    out_node = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
    graph.output_node().meta = copy.copy(out_node.meta)
    return torch.fx.GraphModule(gm, graph)


def trace_aot(
    fn: Callable, inputs: tuple[Any, ...], *, dynamic: bool = False
) -> torch.fx.GraphModule:
    """The inference graph Inductor's post-grad passes would see for ``fn(*inputs)``.

    Mirrors ``torch._inductor.compile_fx``: AOTAutograd with Inductor's decomposition
    table and ``keep_inference_input_mutations=True``; the forward compiler captures the
    graph and stops. ``dynamic`` traces with symbolic sizes. Exceptions of torch propagate
    (the adapter records them as a ``trace`` failure).
    """
    aot_function = resolve("torch._functorch.aot_autograd", "aot_function")
    select_decomp_table = resolve("torch._inductor.decomposition", "select_decomp_table")
    preserve_node_meta = resolve("torch.fx.traceback", "preserve_node_meta")
    box: dict[str, torch.fx.GraphModule] = {}

    def capture(gm, _example_inputs):
        box["gm"] = gm
        raise _Stop

    compiled = aot_function(
        with_line_marks(fn),
        fw_compiler=capture,
        decompositions=select_decomp_table(),
        keep_inference_input_mutations=True,
        dynamic=dynamic,
    )
    try:
        with preserve_node_meta():
            compiled(*inputs)
    except _Stop:
        pass
    if "gm" not in box:
        raise AssertionError("AOTAutograd returned without calling the forward compiler")
    return box["gm"]


def trace_functional(fn: Callable, inputs: tuple[Any, ...]) -> torch.fx.GraphModule:
    """``make_fx(functionalize(fn))(*inputs)``: the input of ``torch.fx.passes.reinplace``.

    Views stay views (``remove="mutations"``); mutations of inputs become a ``copy_``
    epilogue. Traced on fake tensors: a real-mode trace executes every op, including the
    epilogue's ``copy_`` into the caller's inputs, which would mutate them before the run.
    Raises what torch raises (e.g. for mutable custom ops).
    """
    make_fx = resolve("torch.fx.experimental.proxy_tensor", "make_fx")
    preserve_node_meta = resolve("torch.fx.traceback", "preserve_node_meta")
    with preserve_node_meta():
        traced = make_fx(torch.func.functionalize(with_line_marks(fn)), tracing_mode="fake")
        return traced(*inputs)
