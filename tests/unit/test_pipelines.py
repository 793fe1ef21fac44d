"""Pipeline adapters on hand-written programs whose reinplacing decision is known.

In the style of PyTorch's ``test/inductor/test_inplacing_pass.py`` and
``test/test_fx_reinplace_pass.py``: each test states the decision (reinplaced, or a copy
kept and why) and checks it together with eager-equal results, mutated inputs and
output/input aliasing. The fast pipelines (``inductor-reinplace``, ``fx-reinplace``)
carry most tests; full Inductor compiles live in ``test_pipelines_inductor.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.eager import make_inputs, run_eager
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.passes import PIPELINES, PipelineOptions, run_pipeline
from aliasfuzz.passes.hygiene import HookNotFound, resolve, setup_process


def program(body, outputs, shape=(4, 4), validate=True) -> Program:
    n = 1
    for s in shape:
        n *= s
    stride = tuple(int(torch.empty(shape).stride(i)) for i in range(len(shape)))
    p = Program(
        storages=(StorageSpec("s", n),),
        inputs=(TensorSpec("x", "s", shape, stride),),
        body=tuple(Op(*row) for row in body),
        outputs=outputs,
    )
    if validate:
        p.validate()
    return p


def close(a, b) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and torch.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True)
    return a == b


def run_checked(name: str, p: Program, options: PipelineOptions | None = None):
    """Run ``p`` through ``name``; assert success and eager-equal state; return the run."""
    ref = run_eager(p)
    ex = run_pipeline(name, p, make_inputs(p), options=options)
    assert ex.failure is None, ex.failure
    assert len(ex.outputs) == len(ref.outputs)
    assert all(close(a, b) for a, b in zip(ex.outputs, ref.outputs, strict=True)), (
        ex.outputs,
        ref.outputs,
    )
    assert all(close(a, b) for a, b in zip(ex.inputs_after, ref.inputs_after, strict=True))
    assert ex.aliases == ref.aliases
    return ex


def decisions_of(ex, kind=None):
    return [d for d in ex.decisions if kind is None or d.kind == kind]


SIN = ("sin", ("x",), {}, ("y",))


# -- inductor-reinplace (the standalone pass) ------------------------------------------
def test_custom_op_on_dead_intermediate_is_reinplaced():
    # y = sin(x); add_one_(y); return y: nothing reads the old y, so no clone.
    p = program([SIN, ("fz.add_one_", ("y",), {}, ())], ("y",))
    ex = run_checked("inductor-reinplace", p)
    [d] = decisions_of(ex, "auto_functionalized_v2")
    assert d.reinplaced is True and d.arg == "_all_bases[0]" and d.arg_node == "sin"
    assert d.statement == 1 and d.nbytes == 64
    assert ex.counters == {}
    assert ex.graph_before is not None and ex.graph_after is not None


@pytest.mark.parametrize("v2", [True, False])
def test_custom_op_on_input_row(v2):
    # add_one_(x[1]): v2 reinplaces into the input; v1 keeps a clone of the whole x
    # (its functional form mutates the base, which the copy_ epilogue does not match).
    p = program(
        [("select", ("x",), {"dim": 0, "index": 1}, ("r",)), ("fz.add_one_", ("r",), {}, ())],
        (),
    )
    ex = run_checked("inductor-reinplace", p, PipelineOptions(auto_functionalized_v2=v2))
    kind = "auto_functionalized_v2" if v2 else "auto_functionalized"
    [d] = decisions_of(ex, kind)
    assert d.reinplaced is v2
    assert d.statement == 1
    if not v2:
        assert ex.counters.get("missed_tensors_AUTO_FUNC_V1") == 1


def test_reorder_for_locality_turns_a_reinplace_into_a_copy():
    # seams §1 row 2: w = y * 1 precedes add_one_(y) in program order, so the pass alone
    # would reinplace; reorder_for_locality (which Inductor runs for inference, and so does
    # the fast path) sinks w below the op, where it reads the old y: the clone is kept.
    p = program(
        [SIN, ("mul.Scalar", ("y",), {"other": 1.0}, ("w",)), ("fz.add_one_", ("y",), {}, ())],
        ("y", "w"),
    )
    reordered = run_checked("inductor-reinplace", p)
    [d] = decisions_of(reordered, "auto_functionalized_v2")
    assert d.reinplaced is False
    assert reordered.counters == {"missed_tensors_AUTO_FUNC_V2": 1, "missed_bytes_AUTO_FUNC_V2": 64}
    plain = run_checked(
        "inductor-reinplace", p, PipelineOptions(inductor_config={"reorder_for_locality": False})
    )
    assert [d.reinplaced for d in decisions_of(plain, "auto_functionalized_v2")] == [True]


def test_aliasing_mutable_args_v2_share_one_base():
    # bump_pair(y, y): v2 functionalizes both arguments onto one base, _all_bases[0],
    # and writes it in place. (Validation's overlapping-writes rule refuses this program:
    # the adapter still has to take it.)
    p = program([SIN, ("fz.bump_pair", ("y", "y"), {}, ())], ("y",), validate=False)
    ex = run_checked("inductor-reinplace", p)
    assert [(d.arg, d.reinplaced) for d in ex.decisions] == [("_all_bases[0]", True)]


def test_aliasing_mutable_args_v1_clone_one_of_them():
    # With v1 the two arguments are two candidates on one storage: the pass writes one
    # in place and clones the other ("tensor with same storage already reinplaced").
    p = program([SIN, ("fz.bump_pair", ("y", "y"), {}, ())], ("y",), validate=False)
    opts = PipelineOptions(auto_functionalized_v2=False)
    ex = run_pipeline("inductor-reinplace", p, make_inputs(p), options=opts)
    assert ex.failure is None
    assert [(d.arg, d.reinplaced) for d in ex.decisions] == [("p", True), ("q", False)]


def test_scatter_into_fresh_intermediate_left_functional():
    # y = sin(x); y[1] += 1: a select_scatter whose base and result are not realized;
    # should_reinplace_scatter keeps it functional to let it fuse.
    p = program(
        [
            SIN,
            ("select", ("y",), {"dim": 0, "index": 1}, ("v",)),
            ("add_.Scalar", ("v",), {"other": 1.0}, ("w",)),
        ],
        ("y",),
    )
    ex = run_checked("inductor-reinplace", p)
    [d] = decisions_of(ex, "scatter")
    assert d.reinplaced is False and "should_reinplace_scatter" in d.reason
    assert d.arg_node == "sin" and d.statement == 2


def test_scatter_into_input_view_is_reinplaced_and_copy_erased():
    # x[1] += 1 on an input: select_scatter(x, ...) + copy_(x, ...); the scatter's output
    # is copied back into the input, so both are realized: reinplaced, copy_ erased.
    p = program(
        [
            ("select", ("x",), {"dim": 0, "index": 1}, ("v",)),
            ("add_.Scalar", ("v",), {"other": 1.0}, ("w",)),
        ],
        (),
    )
    ex = run_checked("inductor-reinplace", p)
    [s] = decisions_of(ex, "scatter")
    [c] = decisions_of(ex, "copy_epilogue")
    assert s.reinplaced is True and c.reinplaced is True
    assert s.statement == 1 and c.statement == 1


def test_dynamic_shapes_same_decision():
    p = program([SIN, ("fz.add_one_", ("y",), {}, ())], ("y",))
    ex = run_checked("inductor-reinplace", p, PipelineOptions(dynamic=True))
    [d] = decisions_of(ex, "auto_functionalized_v2")
    assert d.reinplaced is True
    vals = [n.meta["val"] for n in ex.graph_before.graph.nodes if n.op == "placeholder"]
    shapes = [v.shape for v in vals if isinstance(v, torch.Tensor)]
    assert any(isinstance(s, torch.SymInt) for s in shapes[0])


def test_every_node_of_graph_before_has_fake_meta():
    p = program([SIN, ("fz.add_one_", ("y",), {}, ()), ("mul", ("y", "x"), {}, ("z",))], ("z",))
    ex = run_checked("inductor-reinplace", p)
    fake = torch._subclasses.fake_tensor.FakeTensor
    for n in ex.graph_before.graph.nodes:
        if n.op != "output":
            assert "val" in n.meta, n.name
    assert any(isinstance(n.meta.get("val"), fake) for n in ex.graph_before.graph.nodes)
    # the pass rewrote the live graph, not the copy: v2 is decomposed only after
    hops = torch.ops.higher_order.auto_functionalized_v2
    assert any(n.target is hops for n in ex.graph_before.graph.nodes)
    assert not any(n.target is hops for n in ex.graph_after.graph.nodes)


# -- fx-reinplace ---------------------------------------------------------------------
def test_fx_reinplace_dead_intermediate_and_input():
    # a = sin(x) reads an input: never reinplaced; b = a + 1 kills a: reinplaced to add_.
    p = program([SIN, ("add.Scalar", ("y",), {"other": 1.0}, ("b",))], ("b",))
    ex = run_checked("fx-reinplace", p)
    by = {d.node: d for d in ex.decisions}
    assert by["sin"].reinplaced is False and by["sin"].statement == 0
    assert by["add"].reinplaced is True and by["add"].statement == 1
    assert any(n.target is torch.ops.aten.add_.Tensor for n in ex.graph_after.graph.nodes)


def test_fx_reinplace_keeps_a_live_operand():
    # b = y + 1 while y is still returned: writing into y would change an output.
    p = program([SIN, ("add.Scalar", ("y",), {"other": 1.0}, ("b",))], ("y", "b"))
    ex = run_checked("fx-reinplace", p)
    assert {d.node: d.reinplaced for d in ex.decisions} == {"sin": False, "add": False}


def test_fx_reinplace_mutation_through_view_of_clone():
    # c = x.clone(); c[1] += 1: the add on the view of c is reinplaced, the scatter erased.
    p = program(
        [
            ("clone", ("x",), {}, ("c",)),
            ("select", ("c",), {"dim": 0, "index": 1}, ("v",)),
            ("add_.Scalar", ("v",), {"other": 1.0}, ("w",)),
        ],
        ("c",),
    )
    ex = run_checked("fx-reinplace", p)
    adds = [d for d in ex.decisions if d.target.startswith("aten.add")]
    assert [d.reinplaced for d in adds] == [True] and adds[0].statement == 2
    assert not any("scatter" in str(n.target) for n in ex.graph_after.graph.nodes)


def test_fx_reinplace_rejects_mutable_custom_op_as_trace_failure():
    p = program([SIN, ("fz.add_one_", ("y",), {}, ())], ("y",))
    ex = run_pipeline("fx-reinplace", p, make_inputs(p))
    assert ex.failure is not None and ex.failure.stage == "trace"
    assert "alias annotations" in ex.failure.message


# -- eager and aot_eager --------------------------------------------------------------
def test_eager_is_the_reference():
    p = program([SIN, ("fz.add_one_", ("x",), {}, ())], ("y", "x"))
    ex = run_checked("eager", p)
    assert ex.decisions == [] and ex.graph_before is None
    assert ex.aliases == {"out0": (), "out1": ("x",)}


def test_aot_eager_records_functional_graph_with_copy_epilogue():
    p = program(
        [("fz.add_one_", ("x",), {}, ()), ("mul.Scalar", ("x",), {"other": 2.0}, ("z",))], ("z",)
    )
    ex = run_checked("aot_eager", p)
    assert ex.decisions == []
    targets = [n.target for n in ex.graph_before.graph.nodes]
    assert torch.ops.aten.copy_.default in targets
    assert torch.ops.higher_order.auto_functionalized_v2 in targets
    assert set(ex.timings) <= {"trace", "compile", "run"} and ex.timings["trace"] > 0


# -- interface and hygiene --------------------------------------------------------------
def test_unknown_pipeline_lists_the_valid_ones():
    p = program([SIN], ("y",))
    with pytest.raises(InvalidArgument, match="inductor-reinplace"):
        run_pipeline("inductr", p, make_inputs(p))
    assert set(PIPELINES) == {
        "eager",
        "aot_eager",
        "inductor",
        "inductor-noreinplace",
        "inductor-reinplace",
        "fx-reinplace",
        "torchscript",
    }


def test_bad_options_and_device():
    with pytest.raises(InvalidArgument, match="no_such_knob"):
        PipelineOptions(inductor_config={"no_such_knob": 1})
    p = program([SIN], ("y",))
    with pytest.raises(InvalidArgument, match="device"):
        run_pipeline("eager", p, make_inputs(p), device="tpu")


def test_missing_hook_names_the_torch_version():
    with pytest.raises(HookNotFound, match=torch.__version__.replace("+", r"\+")):
        resolve("torch._inductor.fx_passes.post_grad", "no_such_pass")


def test_process_hygiene():
    setup_process()
    import torch._dynamo.config as dynamo_config
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    assert dynamo_config.fail_on_recompile_limit_hit is True
    assert inductor_config.fx_graph_cache is False
    assert functorch_config.enable_autograd_cache is False
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"]


def test_same_program_twice_runs_the_pass_twice():
    # A cache hit would skip the pass; with caches off and a reset it runs every time.
    p = program([SIN, ("fz.add_one_", ("y",), {}, ())], ("y",))
    calls = [run_checked("inductor-reinplace", p).extra["pass_calls"] for _ in range(2)]
    assert calls == [1, 1]


def test_failure_is_tagged_with_its_stage():
    # Out-of-place add of mismatched shapes fails in torch when traced: data, not raise.
    p = program([SIN], ("y",))
    x = make_inputs(p)[0]
    ex = run_pipeline("inductor-reinplace", p, (x.reshape(2, 8),))
    assert ex.failure is None  # sin accepts any shape: a control for the next one
    ex = run_pipeline("fx-reinplace", p, ("not a tensor",))
    assert ex.failure is not None and ex.failure.stage == "trace"


@pytest.mark.parametrize("pipeline", ["aot_eager", "inductor", "inductor-reinplace"])
def test_an_error_building_dynamo_s_guards_is_the_compile_s_not_the_run_s(monkeypatch, pipeline):
    # audit 45, a4a2e4a960: Dynamo's guard creation raised after the backend returned, and
    # the clock, at "run" since the backend's last switch, titled it "when run"
    import torch._dynamo.guards as guards

    from aliasfuzz.passes.shared import run_shared

    def refuse(*args, **kwargs):
        raise IndexError("list index out of range (building guards)")

    monkeypatch.setattr(guards.CheckFunctionManager, "__init__", refuse)
    p = program([SIN], ("y",))
    ex = run_pipeline(pipeline, p, make_inputs(p))
    assert ex.failure is not None and ex.failure.stage == "trace", ex.failure
    shared = run_shared(p, [pipeline, "aot_eager" if pipeline != "aot_eager" else "inductor"])
    assert all(e.failure is not None and e.failure.stage == "trace" for e in shared.values()), \
        {n: e.failure for n, e in shared.items()}


def test_an_error_of_the_compiled_code_it_runs_is_still_the_run_s(monkeypatch):
    import torch._dynamo.backends.debugging as debugging

    def broken(gm, example_inputs):
        def call(args):
            raise RuntimeError("the compiled graph raised")

        call._boxed_call = True
        return call

    monkeypatch.setattr(debugging, "boxed_nop", broken)
    p = program([SIN], ("y",))
    ex = run_pipeline("aot_eager", p, make_inputs(p))
    assert ex.failure is not None and ex.failure.stage == "run", ex.failure


def test_fx_reinplace_mutates_inputs_exactly_once():
    # x += 1 then x * 2: tracing must not run the copy_ epilogue on the caller's input.
    p = program(
        [
            ("add_.Scalar", ("x",), {"other": 1.0}, ("x1",)),
            ("mul.Scalar", ("x1",), {"other": 2.0}, ("z",)),
        ],
        ("z",),
    )
    ex = run_checked("fx-reinplace", p)
    assert {d.node: d.reinplaced for d in ex.decisions} == {"add": False, "mul": False}


def test_spy_without_its_pass_fails_loudly(monkeypatch):
    import torch._inductor.fx_passes.post_grad as pg

    from aliasfuzz.passes.spy import reinplace_spy

    monkeypatch.delattr(pg, "reinplace_inplaceable_ops")
    with pytest.raises(HookNotFound, match="reinplace_inplaceable_ops"):
        with reinplace_spy():
            pass


def test_data_dependent_branch_traces_through_dynamo():
    # if y[0] < 100: y.add_(1) -- aot_function cannot trace the branch; run_pipeline then
    # uses Dynamo, which breaks the graph there: two graphs, both seen by the pass.
    p = program(
        [
            ("clone", ("x",), {}, ("c",)),
            ("if_lt_add_", ("c",), {"index": [0], "bound": 100.0, "other": 1.0}, ()),
            ("fz.add_one_", ("c",), {}, ()),
        ],
        ("c",),
        shape=(4,),
    )
    ex = run_checked("inductor-reinplace", p)
    assert ex.extra["pass_calls"] >= 1
    assert [
        (d.kind, d.reinplaced, d.statement) for d in decisions_of(ex, "auto_functionalized_v2")
    ] == [("auto_functionalized_v2", True, 2)]


def test_nested_scatters_fused_by_the_pass_are_both_captured():
    # c[1][1:3] += 1 functionalizes to slice_scatter inside select_scatter; the pass fuses
    # them into one _generalized_scatter (new node): both originals get its decision.
    p = program(
        [
            ("clone", ("x",), {}, ("c",)),
            ("select", ("c",), {"dim": 0, "index": 1}, ("r",)),
            ("narrow", ("r",), {"dim": 0, "start": 1, "length": 2}, ("e",)),
            ("add_.Scalar", ("e",), {"other": 1.0}, ("w",)),
        ],
        ("c",),
    )
    ex = run_checked("inductor-reinplace", p)
    scatters = decisions_of(ex, "scatter")
    assert sorted(d.target for d in scatters) == [
        "aten.select_scatter.default",
        "aten.slice_scatter.default",
    ]
    assert all(d.captured for d in scatters)
    assert len({d.reinplaced for d in scatters}) == 1
    assert {d.statement for d in scatters} == {3}  # the add_ that wrote through both views


def test_a_control_s_disabled_pass_adds_to_those_the_caller_disabled():
    # the reinplace-off and pass-off controls must not re-enable a pass the finding's own
    # options disabled (a replaced disabled_passes would)
    import torch._inductor.config as cfg

    from aliasfuzz.passes.pipelines import inductor_config_patch

    base = PipelineOptions(inductor_config={"disabled_passes": "REMOVE_NOOP_OPS"})
    off = base.with_passes_off("REINPLACE_INPLACEABLE_OPS", "REMOVE_NOOP_OPS")
    assert off.inductor_config["disabled_passes"] == "REMOVE_NOOP_OPS,REINPLACE_INPLACEABLE_OPS"
    assert base.inductor_config["disabled_passes"] == "REMOVE_NOOP_OPS"
    with inductor_config_patch(base, {"disabled_passes": "B", "max_fusion_size": 1}):
        assert cfg.disabled_passes == "REMOVE_NOOP_OPS,B" and cfg.max_fusion_size == 1
    scalar = base.with_inductor_config(**{"cpp.simdlen": 1})
    assert scalar.inductor_config == {"disabled_passes": "REMOVE_NOOP_OPS", "cpp.simdlen": 1}
    with pytest.raises(InvalidArgument):
        base.with_inductor_config(no_such_entry=1)


def test_a_program_compiles_as_first_in_a_fresh_process_after_one_that_lowered_its_op():
    # campaign 41, 3e4273b209: Inductor registers a custom op's fallback lowering the first
    # time a graph calls it, into tables torch._dynamo.reset() keeps; the reinplace pass reads
    # them (is_node_realized), so a second compile of the same program was reinplaced, and
    # returned its input as a fresh output, where repro.py's fresh process did not
    from aliasfuzz.campaign._judge import evaluate
    from aliasfuzz.passes import hygiene

    data = Path(__file__).resolve().parents[1] / "data" / "hygiene" / "fallback-lowered-before.json"
    p = Program.loads(data.read_text())
    outcomes = [evaluate(p, "inductor", "cpu", opts) for opts in ({}, {"dynamic": True}, {})]
    assert [o["verdict"] for o in outcomes] == ["ok"] * 3, [o["explanation"] for o in outcomes]
    hygiene.reset_program()
    lowering = resolve("torch._inductor.lowering", "fallbacks")
    assert not [op for op in lowering if "mylib" in str(op) or "fz" in str(op)]
