"""The ``torchscript`` pipeline: knobs, options, per-call comparison, rejections, verdicts."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.eager import clone_inputs, make_inputs, run_callable
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.render import load_function
from aliasfuzz.oracle.ts_invariants import judge, sites
from aliasfuzz.oracle.verdict import Verdict
from aliasfuzz.passes.execution import Execution
from aliasfuzz.passes.torchscript import (
    TorchScriptOptions,
    jit_knobs,
    run_torchscript,
    torchscript_adapter,
)
from aliasfuzz.passes.ts_calls import compare_results, run_calls

C = torch._C


def _knobs() -> tuple:
    # Reading a setter's return value changes nothing: set it back to what it returned.
    prof = C._jit_set_profiling_executor(True)
    C._jit_set_profiling_executor(prof)
    opt = C._get_graph_executor_optimize()
    runs = C._jit_get_num_profiled_runs()
    return (
        prof,
        opt,
        runs,
        C._jit_texpr_fuser_enabled(),
        C._jit_can_fuse_on_cpu(),
        C._jit_can_fuse_on_gpu(),
        C._jit_get_te_must_use_llvm_cpu(),
    )


def _views_and_inplace(requires_grad: bool = False, optional: bool = False) -> Program:
    """sin -> mul -> select view -> add_ into the view -> add: fusable and aliasing."""
    inputs = [TensorSpec("x", "s0", (4, 4), (4, 1), requires_grad=requires_grad)]
    storages = [StorageSpec("s0", 16, init="randn", init_args={"seed": 3})]
    if optional:
        storages.append(StorageSpec("s1", 4))
        inputs.append(TensorSpec("y", "s1", (4,), (1,), optional=True, none=True))
    return Program(
        storages=tuple(storages),
        inputs=tuple(inputs),
        body=(
            Op("sin", ("x",), {}, ("a",)),
            Op("mul.Scalar", ("a",), {"other": 2.0}, ("b",)),
            Op("select", ("b",), {"dim": 0, "index": 1}, ("c",)),
            Op("add_.Scalar", ("c",), {"other": 1.0}, ("c2",)),
            Op("add", ("b", "x"), {}, ("d",)),
        ),
        outputs=("d", "b"),
    )


def _mutates_input() -> Program:
    """A transposed input narrowed and written in place, then returned as a view."""
    return Program(
        storages=(StorageSpec("s0", 12),),
        inputs=(TensorSpec("x", "s0", (4, 3), (1, 4)),),
        body=(
            Op("transpose", ("x",), {"dim0": 0, "dim1": 1}, ("t",)),
            Op("narrow", ("t",), {"dim": 1, "start": 1, "length": 2}, ("n",)),
            Op("add_.Scalar", ("n",), {"other": 5.0}, ("n2",)),
            Op("clone", ("n2",), {}, ("k",)),
        ),
        outputs=("n2", "k"),
    )


def test_jit_knobs_set_and_restore_every_knob():
    before = _knobs()
    with jit_knobs("simple", num_profiled_runs=3, fuser=True):
        assert C._get_graph_executor_optimize() is False
        assert C._jit_get_num_profiled_runs() == 3
        assert C._jit_texpr_fuser_enabled() and C._jit_can_fuse_on_cpu()
        if not C._llvm_enabled():
            assert C._jit_get_te_must_use_llvm_cpu() is False
    assert _knobs() == before
    with pytest.raises(ZeroDivisionError), jit_knobs("legacy", num_profiled_runs=5):
        assert C._jit_set_profiling_executor(False) is False
        raise ZeroDivisionError
    assert _knobs() == before


def test_bad_options_are_user_errors():
    with pytest.raises(InvalidArgument, match="unknown torchscript option"):
        TorchScriptOptions.from_dict({"profilng_executor": False})
    with pytest.raises(InvalidArgument, match="mode"):
        TorchScriptOptions.from_dict({"mode": "freeze"})
    with pytest.raises(InvalidArgument, match="calls"):
        TorchScriptOptions.from_dict({"calls": 0})
    with pytest.raises(InvalidArgument, match="executor"), jit_knobs("fast"):
        pass


@pytest.mark.parametrize("requires_grad", [False, True])
def test_pipeline_matches_eager_on_every_call(requires_grad):
    p = _views_and_inplace(requires_grad)
    ex = run_torchscript(p, options={"num_profiled_runs": 2})
    assert ex.ok and judge(ex) == (Verdict.OK, "")
    calls = ex.extra["calls"]
    assert [r.phase for r in calls] == ["profiled", "profiled", "optimized", "optimized"]
    assert all(r.mismatches == [] and r.error is None for r in calls)
    # Profiled runs hold prim::profile nodes, optimized runs none.
    assert "prim::profile" in {s.node.kind() for s in sites(calls[1].graph)}
    assert "prim::profile" not in {s.node.kind() for s in sites(calls[2].graph)}
    assert set(ex.extra["executors"]) == {"legacy", "simple"}
    x = make_inputs(p)[0].detach()
    assert torch.equal(ex.outputs[1][1], torch.sin(x).mul(2.0)[1] + 1.0)
    if requires_grad:
        assert calls[-2].backward_graph is not None
        # the last call drops requires_grad on every input (drop_grad_last)
        assert not calls[-1].result.inputs_after[0].requires_grad


def test_pipeline_on_a_mutated_strided_input():
    ex = run_torchscript(_mutates_input(), options={"calls": 3})
    assert judge(ex) == (Verdict.OK, "")
    x_after = ex.inputs_after[0]
    assert x_after.stride() == (1, 4)
    assert ex.aliases["out0"] == ("x",) and ex.aliases["out1"] == ()


def test_optional_inputs_alternate_none():
    ex = run_torchscript(_views_and_inplace(optional=True), options={"calls": 4})
    ys = [r.result.inputs_after[1] for r in ex.extra["calls"]]
    assert [y is None for y in ys] == [True, False, True, False]
    assert judge(ex)[0] is Verdict.OK


def test_custom_ops_script_through_torch_ops():
    p = Program(
        storages=(StorageSpec("s0", 4),),
        inputs=(TensorSpec("x", "s0", (4,), (1,)),),
        body=(Op("fz.add_one_", ("x",), {}, ()),),
        outputs=("x",),
    )
    ex = run_torchscript(p)
    assert ex.failure is None
    assert judge(ex)[0] is Verdict.OK


def test_triton_launches_are_rejected_not_findings():
    p = Program(
        storages=(StorageSpec("s0", 8),),
        inputs=(TensorSpec("x", "s0", (8,), (1,)),),
        body=(Op("tk.scale_", ("x",), {"grid": [2], "BLOCK": 4, "n": 6, "alpha": 0.5}),),
        outputs=("x",),
    )
    ex = run_torchscript(p)
    assert ex.failure is not None
    assert (ex.failure.stage, ex.failure.error_type) == ("trace", "Unscriptable")
    verdict, why = judge(ex)
    assert verdict is Verdict.UNSUPPORTED and not verdict.is_finding
    assert why.startswith("torchscript-unscriptable-op: ")
    assert "statement 0: tk.scale_" in why


def test_trace_mode_runs_and_rejects_none_inputs():
    ex = run_torchscript(_mutates_input(), options={"mode": "trace"})
    assert judge(ex)[0] is Verdict.OK and len(ex.extra["calls"]) == 3
    ex = run_torchscript(_views_and_inplace(optional=True), options={"mode": "trace"})
    verdict, why = judge(ex)
    assert verdict is Verdict.UNSUPPORTED and why.startswith("torchscript-trace: ")
    assert why.endswith("(trace mode: a None input cannot be traced)")


def _fresh(k):
    return (torch.arange(4.0).requires_grad_(),)


def _eager(x):
    return (x * 3,)


@pytest.mark.parametrize(
    ("compiled", "expected"),
    [
        (lambda x: (x * 3 + 1,), "output 0: values differ"),
        (lambda x: (x.detach() * 3,), "output 0: requires_grad eager True, torchscript False"),
        (lambda x: (x * 3, x), "eager returned 1 values, torchscript 2"),
        (lambda x: ((x * x) * 3 / x.detach(),), "gradient 0: values differ"),
    ],
)
def test_run_calls_reports_each_difference(compiled, expected):
    recs = run_calls(compiled, _eager, _fresh, ["x"], calls=1, capture_graphs=False)
    assert any(m.startswith(expected) for m in recs[0].mismatches), recs[0].mismatches
    same = run_calls(_eager, _eager, _fresh, ["x"], calls=1, capture_graphs=False)
    assert same[0].mismatches == []


def test_run_calls_records_a_crash_and_input_mutation():
    def boom(x):
        raise RuntimeError("fused kernel failed")

    recs = run_calls(boom, _eager, _fresh, ["x"], calls=2, capture_graphs=False)
    assert recs[0].error == "RuntimeError: fused kernel failed"

    def writes(x):
        with torch.no_grad():
            x.add_(1)
        return (x * 3,)

    recs = run_calls(writes, _eager, _fresh, ["x"], calls=1, grads=False, capture_graphs=False)
    assert any(m.startswith("input x after the call: values differ") for m in recs[0].mismatches)


def test_compare_results_sees_aliasing():
    p = _mutates_input()
    e = run_callable(lambda x: (x, x.clone()), p, make_inputs(p))
    g = run_callable(lambda x: (x.clone(), x.clone()), p, make_inputs(p))
    diffs = compare_results(e, g, ["x"])
    assert diffs and diffs[0].startswith("aliasing:")


def test_fuser_off_leaves_profile_nodes_in_optimized_graphs():
    # Observed on torch 2.13 CPU: with NNC off the profiling executor never strips its
    # prim::profile nodes (nothing specializes), which the invariant checks report.
    ex = run_torchscript(_mutates_input(), options={"fuser": False, "other_executors": False})
    verdict, why = judge(ex)
    assert verdict is Verdict.INVARIANT
    assert "no_profile_nodes" in why


def test_only_eager_raising_makes_the_program_invalid_not_a_finding():
    def eager(x):
        raise RuntimeError("a view of a multi-output view was modified in place")

    recs = run_calls(_eager, eager, _fresh, ["x"], calls=2, capture_graphs=False)
    assert recs[0].eager_error.startswith("RuntimeError: a view") and recs[0].mismatches == []
    ex = run_torchscript(_mutates_input(), options={"other_executors": False})
    ex.extra["calls"] = recs
    verdict, why = judge(ex)
    assert verdict is Verdict.INVALID_PROGRAM and why.startswith("eager raised on call 0")


def test_a_backward_failing_only_in_torchscript_is_a_crash():
    def compiled(x):
        w = x * x  # saves x for its backward
        x.detach().add_(0)  # bumps x's version behind autograd's back: backward must raise
        return (x * 3 + w - w.detach(),)

    recs = run_calls(compiled, _eager, _fresh, ["x"], calls=1, capture_graphs=False)
    assert recs[0].mismatches == []  # forward values agree
    assert recs[0].error is not None and recs[0].error.startswith("backward: RuntimeError")


def test_snapshot_keeps_layouts_and_sharing():
    base = torch.arange(12.0)
    a = torch.as_strided(base, (3, 2), (1, 3), 1)
    b = torch.as_strided(base, (4,), (2,), 0).detach().requires_grad_()
    ca, cb = clone_inputs((a, b))
    assert (ca.stride(), ca.storage_offset(), cb.stride()) == ((1, 3), 1, (2,))
    assert ca.untyped_storage().data_ptr() == cb.untyped_storage().data_ptr()
    assert ca.untyped_storage().data_ptr() != base.untyped_storage().data_ptr()
    assert cb.requires_grad and cb.is_leaf and torch.equal(ca, a) and torch.equal(cb, b)
    ca.add_(100)  # the copy shares with its sibling only
    assert torch.equal(a, torch.as_strided(torch.arange(12.0), (3, 2), (1, 3), 1))
    assert cb[1].item() == 102.0


def test_caller_inputs_are_used_by_the_last_call():
    p = _mutates_input()
    inputs = make_inputs(p)
    ex = run_torchscript(p, inputs, options={"calls": 2})
    assert judge(ex) == (Verdict.OK, "")
    assert ex.inputs_after[0] is inputs[0]
    assert inputs[0][1, 1].item() == make_inputs(p)[0][1, 1].item() + 5.0


def _adapter_run(program, **ts_options):
    fn, _ = load_function(program)
    opts = SimpleNamespace(torchscript=ts_options)
    names = [t.name for t in program.inputs]
    return SimpleNamespace(
        fn=fn, inputs=make_inputs(program), input_names=names, device="cpu", options=opts
    )


def test_adapter_fills_the_pipelines_execution():
    run = _adapter_run(_views_and_inplace(requires_grad=True), num_profiled_runs=1)
    ex = Execution(pipeline="torchscript", device="cpu")
    torchscript_adapter(run, ex)
    assert judge(ex) == (Verdict.OK, "")
    calls = ex.extra["calls"]
    assert [r.phase for r in calls] == ["profiled", "optimized", "optimized"]
    assert ex.inputs_after[0] is run.inputs[0]
    # the caller's inputs require grad: the last call drops it (drop_grad_last), as
    # run_torchscript does on fresh inputs, and the calls before keep it
    assert calls[-2].result.outputs[0].requires_grad
    assert not ex.outputs[0].requires_grad and run.inputs[0].requires_grad


def test_adapter_rejects_triton_launches_at_the_frontend():
    p = Program(
        storages=(StorageSpec("s0", 8),),
        inputs=(TensorSpec("x", "s0", (8,), (1,)),),
        body=(Op("tk.scale_", ("x",), {"grid": [2], "BLOCK": 4, "n": 6, "alpha": 0.5}),),
        outputs=("x",),
    )
    ex = Execution(pipeline="torchscript", device="cpu")
    torchscript_adapter(_adapter_run(p), ex)
    verdict, why = judge(ex)
    assert verdict is Verdict.UNSUPPORTED and why.startswith("torchscript-frontend: ")
    assert "(frontend: " in why


def test_foreach_on_a_list_literal_is_a_miscompile():
    # Found by bench/torchscript.py on torch 2.13 (CPU) and 2.11 (CUDA): TorchScript's dead
    # code elimination drops `torch._foreach_add_([x, y], c)` when the list literal has no
    # later use, so the inputs are never written. The pipeline must report it, on every
    # executor (the simple one too: the call is gone from the scripted graph already).
    p = Program(
        storages=(StorageSpec("s0", 3), StorageSpec("s1", 3)),
        inputs=(TensorSpec("x", "s0", (3,), (1,)), TensorSpec("y", "s1", (3,), (1,))),
        body=(Op("_foreach_add_.Scalar", ("x", "y"), {"other": -1.0}, ()),),
        outputs=("x",),
    )
    ex = run_torchscript(p)
    verdict, why = judge(ex)
    assert verdict is Verdict.MISCOMPILE
    assert "output 0: values differ" in why and "input y after the call" in why
    for recs in ex.extra["executors"].values():
        assert recs[0].mismatches


def _rotating_buffers() -> Program:
    """Case b23 in the IR: three zero buffers rotated by a bounded loop over ``v``."""
    return Program(
        storages=(
            StorageSpec("s0", 5, init="values", init_args={"data": [1.0, 2.0, 4.0, 8.0, 16.0]}),
        ),
        inputs=(TensorSpec("v", "s0", (5,), (1,)),),
        body=(
            *(Op("zeros", (), {"shape": [1]}, (n,)) for n in ("p", "q", "r")),
            Op("zeros", (), {"shape": [5]}, ("seen",)),
            Op("loop_rotate3_accumulate", ("p", "q", "r", "v", "seen"), {}, ()),
        ),
        outputs=("seen",),
    )


def test_loop_rotating_aliases_miscompiles_when_optimized_only():
    p = _rotating_buffers()
    ex = run_torchscript(p)
    verdict, why = judge(ex)
    assert verdict is Verdict.MISCOMPILE and why.startswith("profiling call 0")
    assert why.endswith(" | profiling: miscompile, legacy: miscompile, simple: ok")
    assert ex.extra["executors"]["legacy"][0].mismatches  # the legacy executor too
    assert ex.extra["executors"]["simple"][0].mismatches == []  # unoptimized: correct
    # The simple executor alone judges it ok; the judgement of the default run above is
    # the most severe over executors, not spoiled by the executor that got it right.
    alone = run_torchscript(p, options={"optimize": False, "other_executors": False})
    assert judge(alone) == (Verdict.OK, "")


def test_inplace_write_to_a_constant_fusion_output_is_a_miscompile():
    # Found by bench/torchscript.py (CUDA run, reproduced on CPU, torch 2.13 and 2.11): a
    # fusion group whose inputs were all constant-folded (`torch.full`) returns outputs
    # that an `add_` then writes in place; from the first optimized call on, the outputs
    # are wrong (garbage or the previous call's values). Profiled call 0 is right.
    p = Program(
        storages=(StorageSpec("s0", 1),),
        inputs=(TensorSpec("x", "s0", (1,), (1,)),),
        body=(
            Op("full", (), {"shape": [4], "value": 3.0}, ("v",)),
            Op("add", ("v", "v"), {}, ("e1",)),
            Op("sin", ("e1",), {}, ("e2",)),
            Op("add_.Scalar", ("e1",), {"other": -1.0}, ("e3",)),
        ),
        outputs=("e3", "e2"),
    )
    ex = run_torchscript(p, options={"other_executors": False})
    verdict, why = judge(ex)
    assert verdict is Verdict.MISCOMPILE and why.startswith("profiling call 1 (optimized)")
    assert ex.extra["calls"][0].mismatches == []
    assert "prim::TensorExprGroup" in {s.node.kind() for s in sites(ex.extra["calls"][1].graph)}


def test_unguarded_grad_specialization_shows_on_the_call_without_grad():
    # The DifferentiableGraph fed through a list has no RequiresGradCheck (see
    # test_ts_invariants); the last call, without grad, then returns an output that
    # requires grad: the invariant finding is confirmed by execution.
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
    verdict, why = judge(ex)
    assert verdict is Verdict.MISCOMPILE
    assert why == (
        "profiling call 2 (optimized): output 0: requires_grad eager False, torchscript True"
    )
    ok = run_torchscript(p, options={"other_executors": False, "drop_grad_last": False})
    assert judge(ok)[0] is Verdict.INVARIANT  # without the confirming call: the guard check


def test_a_call_that_reprofiles_is_not_checked_as_optimized():
    # Dropping requires_grad on the last call makes the executor profile this program
    # again: that call's graph carries prim::profile nodes legitimately. It is labelled
    # `reprofiled` (not `optimized`), so the no-profile-nodes check does not fire on it.
    p = Program(
        storages=(StorageSpec("s0", 4, dtype="float64"), StorageSpec("s1", 4)),
        inputs=(
            TensorSpec("x2", "s0", (4,), (1,), requires_grad=True),
            TensorSpec("x1", "s1", (4,), (1,)),
        ),
        body=(
            Op("mul.out", ("x2", "x2", "x1"), {}, ("v0",)),
            Op("clone", ("x1",), {}, ("e0",)),
            Op("sin", ("e0",), {}, ("e1",)),
        ),
        outputs=("x1", "e0", "e1"),
    )
    ex = run_torchscript(p, options={"other_executors": False})
    assert [r.phase for r in ex.extra["calls"]] == ["profiled", "optimized", "reprofiled"]
    assert "prim::profile" in {s.node.kind() for s in sites(ex.extra["calls"][-1].graph)}
    assert judge(ex) == (Verdict.OK, "")


def test_fused_chunk_view_read_after_an_inplace_write_is_a_miscompile():
    # Found by bench/torchscript.py (CPU, torch 2.13): the TensorExpr fuser pulls
    # `x.chunk(2, -1)` into a fusion group that returns the second chunk as a group output
    # typed with the view's strides ([3, 1] for a 2x1 piece) but not as a view of x: the
    # later read neither sees `x.add_(0.5)` nor the right elements. Optimized calls only.
    p = Program(
        storages=(StorageSpec("s0", 6),),
        inputs=(TensorSpec("x", "s0", (2, 3), (3, 1)),),
        body=(
            Op("chunk", ("x",), {"chunks": 2, "dim": -1}, ("a", "b")),
            Op("add", ("a", "a"), {}, ("e0",)),
            Op("add_.Scalar", ("x",), {"other": 0.5}, ("x2",)),
            Op("add", ("b", "b"), {}, ("e1",)),
        ),
        outputs=("e0", "e1"),
    )
    ex = run_torchscript(p, options={"other_executors": False})
    verdict, why = judge(ex)
    assert verdict is Verdict.MISCOMPILE
    assert why.startswith("profiling call 1 (optimized): output 1: values differ")
    assert ex.extra["calls"][0].mismatches == []
