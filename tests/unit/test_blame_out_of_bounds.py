"""Blame of views past their storage, deterministic: a graph that spells such a view on its
own fake tensors departs (passes.stages.graph_view_out_of_bounds), and full Inductor's
stages check the views their wrapper makes (OutOfBoundsView) instead of hoping glibc
notices the write. Programs: corpus crash-functionalization-9f8ce905b3 (audited 2026-12-04: the
wrong storage offset is functionalization's, auto_functionalized_v2 records 11 against a
10-element base) and fresh user 29's relayout of it (tests/data/blame, filed as
crash-scheduler-c711f5d641 by the glibc cut: one bug split over two stages)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from aliasfuzz.fuzz.ir import Program
from aliasfuzz.oracle.blame import VIEW_OUT_OF_BOUNDS, blame_program
from aliasfuzz.passes.stages import graph_view_out_of_bounds

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = {
    "9f8ce905b3": ROOT / "corpus" / "crash-functionalization-9f8ce905b3" / "program.json",
    "c711f5d641": ROOT / "tests" / "data" / "blame" / "oob_relayout_c711f5d641.json",
}


def _graph(view: str, offset: int, storage: int = 10) -> torch.fx.GraphModule:
    """A graph viewing a base of ``storage`` elements (its meta ``val``) at ``offset`` with
    sizes (2, 1) and strides (3, 1), through ``as_strided`` or ``auto_functionalized_v2``."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    x.meta["val"] = torch.empty(storage)
    if view == "as_strided":
        out = g.call_function(torch.ops.aten.as_strided.default, (x, [2, 1], [3, 1], offset))
    else:
        out = g.call_function(torch.ops.higher_order.auto_functionalized_v2,
                              (torch.ops.aten.add_.Tensor,),
                              {"other": x, "_self_base_index": 0, "_self_size": (2, 1),
                               "_self_stride": (3, 1), "_self_storage_offset": offset,
                               "_all_bases": [x]})
    g.output(out)
    return torch.fx.GraphModule(torch.nn.Module(), g)


@pytest.mark.parametrize("view", ["as_strided", "auto_functionalized_v2"])
def test_a_graph_view_past_its_bases_storage_is_named_and_one_inside_is_not(view):
    said = graph_view_out_of_bounds(_graph(view, 11))
    assert said is not None and "(2, 1), (3, 1), 11)" in said
    assert "past its base's 10-element storage (elements 11 to 14)" in said
    assert graph_view_out_of_bounds(_graph(view, 6)) is None  # the last one that fits
    assert graph_view_out_of_bounds(_graph(view, 11, storage=15)) is None


def test_a_view_of_a_symbolic_size_is_not_judged():
    gm = _graph("as_strided", 11)
    node = next(n for n in gm.graph.nodes if n.op == "call_function")
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    s = ShapeEnv().create_unbacked_symint()
    node.args = (node.args[0], [s, 1], [3, 1], 11)
    assert graph_view_out_of_bounds(gm) is None


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_an_out_of_bounds_finding_is_blamed_on_functionalization_by_its_graphs(name):
    program = Program.from_json(json.loads(PROGRAMS[name].read_text()))
    b = blame_program(program, "inductor", "crash", "out-of-bounds",
                      error="inductor writes out of bounds: Inductor's wrapper made "
                            "reinterpret_tensor(buf, ...): out of bounds")
    assert b.stages == ("functionalization",), b.trail
    said = dict(b.trail)
    assert said["dynamo"] == "agrees"
    assert said["functionalization"].startswith(f"departs ({VIEW_OUT_OF_BOUNDS}: auto_functionalized_v2")
    # the compiled stages stop at the view their wrapper makes, in this process, every time
    for stage in ("lowering", "scheduler"):
        assert said[stage].startswith("departs (raises OutOfBoundsView"), said[stage]
        assert "the final pipeline's error differs" not in said[stage]
