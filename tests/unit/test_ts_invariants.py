"""Each TorchScript graph invariant fails on a graph that breaks it and passes on real graphs."""

from __future__ import annotations

import pytest
import torch

from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.oracle.ts_invariants import (
    CHECKS,
    check_fusion_guarded,
    check_lint,
    check_no_profile_nodes,
    check_profiled_inputs_specialized,
    run_checks,
    sites,
)
from aliasfuzz.passes.torchscript import run_torchscript


def _program(requires_grad: bool) -> Program:
    return Program(
        storages=(StorageSpec("s0", 16),),
        inputs=(TensorSpec("x", "s0", (4, 4), (4, 1), requires_grad=requires_grad),),
        body=(
            Op("sin", ("x",), {}, ("a",)),
            Op("mul.Scalar", ("a",), {"other": 2.0}, ("b",)),
            Op("add", ("b", "x"), {}, ("c",)),
        ),
        outputs=("c", "b"),
    )


@pytest.fixture(scope="module")
def te_graph():
    """An optimized profiling-executor graph holding a TensorExpr group behind a TypeCheck."""
    ex = run_torchscript(_program(False), options={"other_executors": False})
    return ex.extra["calls"][-1].graph


@pytest.fixture(scope="module")
def profiled_graph():
    """The graph of the profiling run (call 0): it still holds prim::profile nodes."""
    ex = run_torchscript(_program(False), options={"other_executors": False})
    return ex.extra["calls"][0].graph


@pytest.fixture(scope="module")
def diff_graph():
    """An optimized graph with a DifferentiableGraph behind a RequiresGradCheck."""
    ex = run_torchscript(_program(True), options={"other_executors": False})
    return ex.extra["calls"][-1].graph


def _kinds(graph) -> set[str]:
    return {s.node.kind() for s in sites(graph)}


def _failed(graph) -> set[str]:
    return {c.name for c in run_checks(graph) if not c.ok}


def test_optimized_graphs_pass_every_check(te_graph, diff_graph):
    # The graphs really have the guarded shapes the checks look for, so passing means something.
    assert {"prim::TensorExprGroup", "prim::TypeCheck"} <= _kinds(te_graph)
    assert {"prim::DifferentiableGraph", "prim::RequiresGradCheck"} <= _kinds(diff_graph)
    assert _failed(te_graph) == set()
    assert _failed(diff_graph) == set()
    assert len(run_checks(te_graph)) == len(CHECKS)


def test_profiled_graph_fails_profile_checks(profiled_graph):
    c = check_no_profile_nodes(profiled_graph)
    assert not c.ok and "prim::profile(%x" in c.message
    spec = check_profiled_inputs_specialized(profiled_graph)
    assert not spec.ok and "never specialized" in spec.message
    assert check_lint(profiled_graph).ok


def _parsed(body: str):
    return torch._C.parse_ir(body)


def test_profile_node_inside_if_block_is_found():
    g = _parsed(
        """
graph(%x : Tensor, %c : bool):
  %r : Tensor = prim::If(%c)
    block0():
      %p : Tensor = prim::profile_ivalue(%x)
      -> (%p)
    block1():
      -> (%x)
  return (%r)
"""
    )
    c = check_no_profile_nodes(g)
    assert not c.ok and "prim::profile_ivalue" in c.message and "block0" in c.message


def _with_group(kind: str, sub_body: str):
    g = _parsed("graph(%x : Tensor):\n  %a : Tensor = aten::sin(%x)\n  return (%a)\n")
    n = g.create(kind, [next(g.inputs())], 1)
    n.g_("Subgraph", _parsed(sub_body))
    g.appendNode(n)
    g.registerOutput(n.output())
    return g


def test_profile_node_inside_subgraph_is_found():
    g = _with_group(
        "prim::TensorExprGroup",
        "graph(%x : Tensor):\n  %p : Tensor = prim::profile(%x)\n  %a : Tensor = aten::cos(%p)\n  return (%a)\n",
    )
    c = check_no_profile_nodes(g)
    assert not c.ok and "Subgraph" in c.message
    # The profiled value is the subgraph's own input and nothing guards it.
    assert not check_profiled_inputs_specialized(g).ok


def test_profile_on_a_guarded_input_counts_as_specialized():
    g = _parsed(
        """
graph(%x : Tensor):
  %t : Float(4, strides=[1], requires_grad=0, device=cpu), %ok : bool = prim::TypeCheck[types=[Float(4, strides=[1], requires_grad=0, device=cpu)]](%x)
  %p : Tensor = prim::profile(%x)
  return (%p, %ok)
"""
    )
    assert check_profiled_inputs_specialized(g).ok
    assert not check_no_profile_nodes(g).ok  # still a leftover node, under its own name


def test_lint_fails_on_use_before_definition():
    g = _parsed(
        "graph(%x : Tensor):\n  %a : Tensor = aten::sin(%x)\n  %b : Tensor = aten::cos(%a)\n  return (%b)\n"
    )
    assert check_lint(g).ok
    first, second = list(g.nodes())
    second.moveBefore(first)
    c = check_lint(g)
    assert not c.ok and "fails lint" in c.message


def test_lint_descends_into_subgraphs():
    g = _with_group(
        "prim::TensorExprGroup",
        "graph(%x : Tensor):\n  %a : Tensor = aten::sin(%x)\n  %b : Tensor = aten::cos(%a)\n  return (%b)\n",
    )
    assert check_lint(g).ok
    sub = next(s.node for s in sites(g) if s.node.kind() == "prim::TensorExprGroup").g("Subgraph")
    first, second = list(sub.nodes())
    second.moveBefore(first)
    c = check_lint(g)
    assert not c.ok and "TensorExprGroup" in c.message


@pytest.mark.parametrize("kind", ["prim::TensorExprGroup", "prim::DifferentiableGraph"])
def test_group_outside_any_if_is_unguarded(kind):
    g = _with_group(kind, "graph(%x : Tensor):\n  %a : Tensor = aten::cos(%x)\n  return (%a)\n")
    c = check_fusion_guarded(g)
    assert not c.ok and kind in c.message


@pytest.mark.parametrize("fixture", ["te_graph", "diff_graph"])
def test_group_whose_guard_is_bypassed_is_unguarded(fixture, request):
    g = request.getfixturevalue(fixture).copy()
    assert check_fusion_guarded(g).ok
    # Replace the If's condition (the guard's verdict) by a constant true: the group then
    # runs whatever the inputs are, which is what the check must refuse.
    if_node = next(
        s.node
        for s in sites(g)
        if s.node.kind() == "prim::If"
        and s.node.inputsAt(0).node().kind() in ("prim::TypeCheck", "prim::RequiresGradCheck")
    )
    true = g.insertConstant(True)
    true.node().moveBefore(if_node)
    if_node.replaceInput(0, true)
    c = check_fusion_guarded(g)
    assert not c.ok and "unguarded" in c.message
    assert check_lint(g).ok  # still a well-formed graph: only the guard check catches it


def test_group_in_the_fallback_block_is_unguarded(te_graph):
    g = te_graph.copy()
    if_node = next(s.node for s in sites(g) if s.node.kind() == "prim::If")
    then_block, else_block = list(if_node.blocks())
    group = next(n for n in then_block.nodes() if n.kind() == "prim::TensorExprGroup")
    # Move the group into the false (fallback) branch, before the branch's first node.
    group.moveBefore(next(iter(else_block.nodes())))
    assert not check_fusion_guarded(g).ok


def test_differentiable_graph_on_a_list_input_is_left_unguarded():
    # Found by bench/torchscript.py (CUDA run; reproduced on CPU, torch 2.13): with a
    # requires_grad input reaching the graph only through a list (`torch.cat([x], 1)`),
    # the profiling executor inserts no RequiresGradCheck, so later calls without grad --
    # even under torch.no_grad() -- still get outputs with requires_grad=True.
    p = Program(
        storages=(StorageSpec("s0", 6),),
        inputs=(TensorSpec("x", "s0", (3, 2), (2, 1), requires_grad=True),),
        body=(
            Op("cat", ("x",), {"dim": 1}, ("c",)),
            Op("mul.Scalar", ("c",), {"other": 0.5}, ("m",)),
        ),
        outputs=("m",),
    )
    ex = run_torchscript(p, options={"other_executors": False})
    graph = ex.extra["calls"][-1].graph
    assert "prim::DifferentiableGraph" in _kinds(graph)
    c = check_fusion_guarded(graph)
    assert not c.ok and "prim::DifferentiableGraph" in c.message
    assert _failed(graph) == {"fusion_guarded"}
