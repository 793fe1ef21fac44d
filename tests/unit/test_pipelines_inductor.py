"""Full ``torch.compile(backend=inductor)`` on CPU with the reinplace spy (~1 s a compile).

Decisions are those of ``shared/notes/pytorch-seams.md`` §1, where the graph is captured
*at* the pass: after ``reorder_for_locality``, which the standalone pipeline skips.
"""

from __future__ import annotations

import torch

from aliasfuzz.fuzz.eager import make_inputs, run_eager
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.passes import run_pipeline
from tests.common.torch_versions import on_torch_2_11


def program(body, outputs) -> Program:
    p = Program(
        storages=(StorageSpec("s", 12),),
        inputs=(TensorSpec("x", "s", (3, 4), (4, 1)),),
        body=tuple(Op(*row) for row in body),
        outputs=outputs,
    )
    p.validate()
    return p


def assert_eager_equal(p: Program, ex) -> None:
    ref = run_eager(p)
    assert ex.failure is None, ex.failure
    for a, b in zip(
        (*ex.outputs, *ex.inputs_after), (*ref.outputs, *ref.inputs_after), strict=True
    ):
        # Inductor's sin/cos differ from eager by ~6e-8: compare with the cases' tolerances.
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    assert ex.aliases == ref.aliases


SIN = ("sin", ("x",), {}, ("y",))


def test_inductor_reinplaces_custom_op_on_dead_intermediate():
    p = program([SIN, ("fz.add_one_", ("y",), {}, ()), ("mul", ("y", "y"), {}, ("z",))], ("z",))
    ex = run_pipeline("inductor", p, make_inputs(p))
    assert_eager_equal(p, ex)
    [d] = ex.decisions
    assert (d.kind, d.reinplaced, d.statement) == ("auto_functionalized_v2", True, 1)
    assert ex.extra["pass_calls"] == 1 and ex.counters == {}
    assert {"trace", "compile", "run"} <= set(ex.timings)


def test_inductor_keeps_clone_when_reorder_moves_a_reader_after_the_op():
    # seams §1 row 2: reorder_for_locality sinks w = y * 1 below add_one_(y); w then
    # needs the old y, so the clone stays (and the counters report 48 bytes).
    p = program(
        [SIN, ("mul.Scalar", ("y",), {"other": 1.0}, ("w",)), ("fz.add_one_", ("y",), {}, ())],
        ("y", "w"),
    )
    ex = run_pipeline("inductor", p, make_inputs(p))
    assert_eager_equal(p, ex)
    [d] = ex.decisions
    assert d.reinplaced is False and d.nbytes == 48
    assert ex.counters == {"missed_tensors_AUTO_FUNC_V2": 1, "missed_bytes_AUTO_FUNC_V2": 48}


def test_inductor_noreinplace_skips_the_pass_and_stays_correct():
    p = program(
        [SIN, ("mul.Scalar", ("y",), {"other": 1.0}, ("w",)), ("fz.add_one_", ("y",), {}, ())],
        ("y", "w"),
    )
    ex = run_pipeline("inductor-noreinplace", p, make_inputs(p))
    assert ex.extra["pass_calls"] == 0 and ex.decisions == []
    if on_torch_2_11("decompose-auto-functionalized-clones-nothing-undecided"):
        # torch 2.11 itself, with the pass off, clones nothing for add_one_: w (y * 1.0,
        # which remove_noop_ops makes y) comes back bumped; this pipeline runs torch as is
        ref = run_eager(p)
        assert ex.failure is None, ex.failure
        torch.testing.assert_close(ex.outputs[0], ref.outputs[0], rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(ex.outputs[1], ref.outputs[1] + 1, rtol=1e-4, atol=1e-5)
        return
    assert_eager_equal(p, ex)


def test_a_control_with_the_reinplace_pass_off_keeps_every_clone_on_each_torch():
    # the oracle's and blame's controls (with_passes_off) mean the pipeline without the
    # pass: on torch 2.11 the config alone reinplaces every custom op (the test above), so
    # the control makes the undecided node clone everything, as torch 2.13 does
    from aliasfuzz.passes.pipelines import PipelineOptions

    p = program(
        [SIN, ("mul.Scalar", ("y",), {"other": 1.0}, ("w",)), ("fz.add_one_", ("y",), {}, ())],
        ("y", "w"),
    )
    off = PipelineOptions().with_passes_off("REINPLACE_INPLACEABLE_OPS")
    assert off.reinplace_off_declines
    ex = run_pipeline("inductor", p, make_inputs(p), options=off)
    assert_eager_equal(p, ex)
    assert ex.extra["pass_calls"] == 0


def test_fast_path_runs_a_reinplaced_foreach_like_inductor():
    # the reinplace pass turns _foreach_add into _foreach_add_ (returning None) and leaves a
    # getitem of its result that nothing reads; Inductor never evaluates it, and the fast
    # path must not either (it raised "'NoneType' object is not subscriptable": the
    # false crash-reinplace of the second audit)
    p = program([("_foreach_add_.Scalar", ("x",), {"other": 0.5}, ())], ())
    for pipeline in ("inductor-reinplace", "inductor"):
        assert_eager_equal(p, run_pipeline(pipeline, p, make_inputs(p)))


def test_drop_dead_getitems_keeps_what_is_read():
    import operator

    from aliasfuzz.passes.pipelines import drop_dead_getitems

    g = torch.fx.Graph()
    x = g.placeholder("x")
    pair = g.call_function(torch.ops.aten.split.Tensor, (x, 2))
    first = g.call_function(operator.getitem, (pair, 0))
    g.call_function(operator.getitem, (pair, 1))  # dead
    g.output((first,))
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    assert drop_dead_getitems(gm) == 1
    gm.recompile()
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"].count(operator.getitem) == 1
    assert torch.equal(gm(torch.arange(4.0))[0], torch.tensor([0.0, 1.0]))
